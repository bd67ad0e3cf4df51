"""What a turn reads from the database before its first provider call, in one trip.

The reads run at once (``together``, runner/db.py): the history beside the first step's gate
(runner/opening.py), then the budget reservation and recall's lazy pass, then the memories beside
the related items. The whole turn stays within a handful of statements between the claim and
the first text (STATEMENT_BUDGET in tests/agent/test_turn_statements.py); runner/phases.py logs
where the time goes.
"""

from __future__ import annotations

import datetime as dt
import functools
from dataclasses import dataclass, field
from zoneinfo import ZoneInfo

from django.utils import timezone

from agent import context, prompt, selectors, services
from agent.attachments import image_urls
from agent.models import Message
from agent.runner.db import db, together
from agent.runner.lease import TurnLease
from agent.runner.model_loop import CHAT_BUDGETS, reserve_step
from agent.runner.opening import Opening, summary_upto
from agent.runner.phases import Phases
from files.models import File
from files.selectors import files_context
from memory import selectors as memory_selectors
from talorys.owner.models import OwnerSettings
from talorys.owner.selectors import (
    conversation_provider,
    owner_settings_current,
    owner_settings_get,
    provider_config,
)
from talorys.providers.base import ProviderConfig

# Enough for the notes (at most selectors.outcome_notes_outside's limit) to settle.
OUTCOME_ROUNDS = 4


@dataclass
class TurnInputs:
    provider: ProviderConfig
    local_now: dt.datetime
    time_zone: str
    memories: list[str]
    summary: str
    history: list[context.HistoryEntry]
    max_steps: int
    max_tool_calls: int
    max_output_tokens: int
    max_context_tokens: int
    # Chat turns only: the history that fits, and the outcomes of proposals whose reply it left out.
    window: context.Window | None = None
    outcomes: list[str] = field(default_factory=list)
    # Chat turns only: items related to the owner's message (recall), for the prompt.
    related: list[str] = field(default_factory=list)
    # Chat turns only: the text of the files attached to the owner's message (files_context),
    # and their images as data: URLs when the model sees images (OwnerSettings).
    attached: str = ""
    images: list[str] = field(default_factory=list)
    sees_images: bool = False

    def system_prompt(self, *, summary: str = "", outcomes: list[str] | None = None) -> str:
        return prompt.system_prompt(
            now=self.local_now,
            time_zone=self.time_zone,
            memories=self.memories,
            summary=summary,
            outcomes=outcomes,
            related=self.related,
            attached=self.attached,
        )


def read_inputs(*, text: str) -> TurnInputs:
    """The owner's settings, clock and the memories recalled for ``text`` (a scheduled run's).

    Recall first catches up with what changed since the last turn (memory.selectors.
    recall_pass; messages are indexed after each reply, the catch-up task does the rest)."""
    owner = owner_settings_get()
    recall = memory_selectors.recall_pass(text=text, owner_settings=owner)
    return _inputs(
        owner, memories=memory_selectors.turn_memories(text=text, recall=recall), related=[]
    )


def _inputs(owner: OwnerSettings, *, memories: list[str], related: list[str]) -> TurnInputs:
    return TurnInputs(
        provider=provider_config(owner),
        local_now=timezone.now().astimezone(ZoneInfo(owner.time_zone)),
        time_zone=owner.time_zone,
        memories=memories,
        related=related,
        summary="",
        history=[],
        max_steps=max(1, owner.max_steps_per_turn),
        max_tool_calls=owner.max_tool_calls_per_turn,
        max_output_tokens=owner.max_output_tokens,
        max_context_tokens=owner.max_context_tokens,
        sees_images=owner.model_sees_images,
    )


def _owner_and_recall_pass(
    text: str, opening: Opening
) -> tuple[OwnerSettings, memory_selectors.RecallPass, Opening]:
    """The settings (this process's copy, when the version the opening read is its own), the
    first model step's reservation (its limit is in them) and the index's lazy pass, in the
    opening read's trip; and what it read (the summary, the conversation's model)."""
    owner = owner_settings_current(version=opening.settings_version)
    if not provider_config(owner).is_demo:  # the demo's replies cost nothing (model_loop)
        reserve_step(CHAT_BUDGETS, owner_settings=owner)
    recall = memory_selectors.recall_pass(
        text=text, owner_settings=owner, clock=opening.index_clock
    )
    return owner, recall, opening


async def _read_owner_inputs(
    start: services.TurnStart, lease: TurnLease, phases: Phases
) -> TurnInputs:
    """The first model step's gate (the lease, the budget: model_loop's ``step_gate``) with the
    summary, the settings and the index's lazy pass, then the memories and the related items,
    each in a trip of its own at the same time."""
    owner, recall, opening = await phases.waited(
        "gate", lease.opening_gate(functools.partial(_owner_and_recall_pass, start.text))
    )
    memories, related = await phases.waited(
        "recall",
        together(
            db(memory_selectors.turn_memories)(text=start.text, recall=recall),
            db(memory_selectors.turn_related)(
                text=start.text, conversation_id=start.conversation_id, recall=recall
            ),
        ),
    )
    inputs = _inputs(owner, memories=memories, related=related)
    inputs.summary = opening.summary
    inputs.provider = conversation_provider(inputs.provider, model=opening.model)
    return inputs


@dataclass
class _Conversation:
    history: list[context.HistoryEntry]
    # Whether the conversation holds any proposal: without one there are no outcome notes.
    proposals: bool
    # The outcome notes when the window keeps every reply of ``history`` (the usual case).
    outcomes_all_shown: list[str]


def _read_conversation(start: services.TurnStart) -> _Conversation:
    """The history after the summary (the opening read brings the summary itself) and the
    outcome notes of the replies it leaves out."""
    history, proposals = selectors.turn_history(
        conversation_id=start.conversation_id, after_id=summary_upto(start.conversation_id)
    )
    return _Conversation(
        history=history,
        proposals=proposals,
        outcomes_all_shown=selectors.outcome_notes_outside(
            conversation_id=start.conversation_id, shown_from_id=_first_id(history)
        )
        if proposals
        else [],
    )


def _first_id(entries: list[context.HistoryEntry]) -> int | None:
    return entries[0].id if entries else None


def _replies(entries: list[context.HistoryEntry]) -> set[int]:
    return {entry.id for entry in entries if entry.role == Message.Role.ASSISTANT}


async def read_chat_inputs(
    start: services.TurnStart, lease: TurnLease, phases: Phases
) -> TurnInputs:
    """``read_inputs`` plus the conversation: its summary, history, window and outcome notes;
    and the first model step passes its gate (pass ``first_step_gated`` to model_loop).

    The conversation's trip to the database runs beside recall's (agent/runner/db.py), which
    needs none of it: recall is the longer, so the conversation costs the turn nothing before
    its first token. (Where the trips share one thread, the suite's settings, they run one
    after the other.)"""
    conversation, inputs = await together(
        phases.waited("conversation", db(_read_conversation)(start)),
        _read_owner_inputs(start, lease, phases),
    )
    with phases.timed("window"):
        await _choose_window(start, inputs, conversation)
    return inputs


def attached_files(
    *, file_ids: tuple[int, ...], query: str, budget_chars: int, sees_images: bool
) -> tuple[str, list[str]]:
    """The attached files' text for the prompt, of those still live (a retry's file may have
    gone to the bin since), the passages most relevant to ``query`` when not all fit; and,
    for a model that sees images, the images as data: URLs (attachments.image_urls)."""
    live = {f.pk: f for f in File.objects.live().filter(pk__in=file_ids)}
    if not live:
        return "", []
    ids = [pk for pk in file_ids if pk in live]
    context_ = files_context(file_ids=ids, query=query, budget_chars=budget_chars)
    if not sees_images:
        return context_.text, []
    images, notes = image_urls([live[pk] for pk in ids])
    kept = [note for note in context_.notes if not any(note.startswith(k) for k in notes)]
    labelled = [f"{p.label}\n{p.text}" for p in context_.passages]
    return "\n\n".join([*kept, *notes.values(), *labelled]), images


async def _choose_window(
    start: services.TurnStart, inputs: TurnInputs, conversation: _Conversation
) -> None:
    inputs.history = conversation.history
    if start.attachments:  # one more trip, only for a message with files
        inputs.attached, inputs.images = await db(attached_files)(
            file_ids=start.attachments,
            query=start.text,
            budget_chars=context.attachments_budget(
                max_context_tokens=inputs.max_context_tokens, system_prompt=inputs.system_prompt()
            ),
            sees_images=inputs.sees_images,
        )
    # Chosen here: the window is a pure function of what was just read, and the outcomes need
    # to know which replies it keeps.
    # Measured without the summary: HISTORY_RESERVE_TOKENS keeps room for it. The outcome notes
    # go in the system prompt, so they are measured: a smaller window may leave out more
    # replies, hence more notes, so the choice is repeated until the notes stop changing. The
    # first round's notes were read with the conversation; later rounds (only when the window
    # leaves out a reply) read them again.
    all_replies = _replies(inputs.history)
    outcomes: list[str] = []
    for _ in range(OUTCOME_ROUNDS):
        budget = context.history_budget(
            max_context_tokens=inputs.max_context_tokens,
            system_prompt=inputs.system_prompt(outcomes=outcomes),
        )
        inputs.window = context.select_window(inputs.history, budget_tokens=budget)
        shown = _replies(inputs.window.kept)
        if shown == all_replies or not conversation.proposals:
            inputs.outcomes = conversation.outcomes_all_shown
        else:
            inputs.outcomes = await db(selectors.outcome_notes_outside)(
                conversation_id=start.conversation_id, shown_from_id=_first_id(inputs.window.kept)
            )
        if inputs.outcomes == outcomes:
            break
        outcomes = inputs.outcomes
