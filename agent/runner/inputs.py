"""What a turn reads from the database before its first provider call, in one trip."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from zoneinfo import ZoneInfo

from django.utils import timezone

from agent import context, prompt, selectors, services
from agent.models import Conversation, Message
from memory import selectors as memory_selectors
from talorys.providers.base import ProviderConfig
from talorys.workspace import services as core_services
from talorys.workspace.selectors import provider_config

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

    def system_prompt(self, *, summary: str = "", outcomes: list[str] | None = None) -> str:
        return prompt.system_prompt(
            now=self.local_now,
            time_zone=self.time_zone,
            memories=self.memories,
            summary=summary,
            outcomes=outcomes,
            related=self.related,
        )


def read_inputs(
    *,
    text: str,
    summary: str = "",
    history: list[context.HistoryEntry] | None = None,
    related_to: int | None = None,
) -> TurnInputs:
    """The owner's settings, clock and the memories recalled for ``text``; with ``related_to``
    (a chat turn's conversation), the related items too.

    Recall first catches up with what changed since the last turn (memory.selectors.
    recall_for_turn; messages are indexed after each reply, the catch-up task does the rest)."""
    owner = core_services.owner_settings_get()
    recalled = memory_selectors.recall_for_turn(
        text=text, conversation_id=related_to, owner_settings=owner
    )
    return TurnInputs(
        provider=provider_config(owner),
        local_now=timezone.now().astimezone(ZoneInfo(owner.time_zone)),
        time_zone=owner.time_zone,
        memories=recalled.memories,
        related=recalled.related,
        summary=summary,
        history=history or [],
        max_steps=max(1, owner.max_steps_per_turn),
        max_tool_calls=owner.max_tool_calls_per_turn,
        max_output_tokens=owner.max_output_tokens,
        max_context_tokens=owner.max_context_tokens,
    )


def read_chat_inputs(start: services.TurnStart) -> TurnInputs:
    """``read_inputs`` plus the conversation: its summary, history, window and outcome notes."""
    conversation = Conversation.objects.only("summary", "summary_upto").get(
        pk=start.conversation_id
    )
    inputs = read_inputs(
        text=start.text,
        summary=conversation.summary,
        history=selectors.conversation_history(
            conversation_id=start.conversation_id, after_id=conversation.summary_upto
        ),
        related_to=start.conversation_id,
    )
    # Chosen here, in the same trip to the database thread: the window is a pure function of
    # what was just read, and the outcomes need to know which replies it keeps.
    # Measured without the summary: HISTORY_RESERVE_TOKENS keeps room for it. The outcome notes
    # go in the system prompt, so they are measured: a smaller window may leave out more
    # replies, hence more notes, so the choice is repeated until the notes stop changing (once,
    # when the conversation has no proposals out of the window).
    outcomes: list[str] = []
    for _ in range(OUTCOME_ROUNDS):
        budget = context.history_budget(
            max_context_tokens=inputs.max_context_tokens,
            system_prompt=inputs.system_prompt(outcomes=outcomes),
        )
        inputs.window = context.select_window(inputs.history, budget_tokens=budget)
        inputs.outcomes = selectors.outcome_notes_outside(
            conversation_id=start.conversation_id,
            shown_message_ids={
                e.id for e in inputs.window.kept if e.role == Message.Role.ASSISTANT
            },
        )
        if inputs.outcomes == outcomes:
            break
        outcomes = inputs.outcomes
    return inputs
