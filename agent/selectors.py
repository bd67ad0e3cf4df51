"""Reads of conversations, and what a turn reads to build its context."""

from __future__ import annotations

import re
from functools import reduce
from operator import or_

from django.db.models import Prefetch, Q, QuerySet

from agent.context import HistoryEntry
from agent.models import Conversation, Message
from approvals.models import PendingAction
from approvals.selectors import pending_action_outcomes
from memory.models import Memory
from talorys.errors import NotFound

HISTORY_LIMIT = 200
MEMORY_LIMIT = 8
MAX_KEYWORDS = 12
MEMORY_CANDIDATES = 200

_WORD = re.compile(r"[^\W_]{3,}")
_STOPWORD_TEXT = (
    "the and for are but not you your yours with this that these those from have has had was "
    "were will would can could should what when where which who whom why how about into onto "
    "than then them they their there here our ours its his her hers him she all any some just "
    "also very much many more most please tell show give make let get got does did done want "
    "need like know today tomorrow yesterday"
)
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def conversation_list() -> QuerySet[Conversation]:
    return Conversation.objects.all()


def conversation_with_messages(*, conversation_id: int) -> Conversation:
    conversation = (
        Conversation.objects.filter(pk=conversation_id)
        .prefetch_related(Prefetch("messages", queryset=Message.objects.order_by("id")))
        .first()
    )
    if conversation is None:
        raise NotFound(f"Conversation {conversation_id} does not exist.")
    return conversation


def conversation_history(*, conversation_id: int, after_id: int | None) -> list[HistoryEntry]:
    """The newest messages a turn may show the model, oldest first: owner messages and complete
    replies after the running summary, at most HISTORY_LIMIT of them. A reply that proposed a
    destructive action carries a note of that action's outcome as it stands now."""
    rows = list(
        Message.objects.filter(conversation_id=conversation_id, id__gt=after_id or 0)
        .filter(
            Q(role=Message.Role.USER)
            | Q(role=Message.Role.ASSISTANT, status=Message.Status.COMPLETE)
        )
        .order_by("-id")
        .values_list("id", "role", "content", "tool_activity")[:HISTORY_LIMIT]
    )
    action_ids = [
        activity["action_id"]
        for *_, activities in rows
        for activity in activities or []
        if activity.get("action_id")
    ]
    outcomes = pending_action_outcomes(action_ids=action_ids) if action_ids else {}
    entries = []
    for pk, role, content, activities in reversed(rows):
        notes = [
            outcome_note(outcomes[a["action_id"]])
            for a in activities or []
            if a.get("action_id") in outcomes
        ]
        if notes:
            content = "\n\n".join([content, *notes]) if content else "\n\n".join(notes)
        entries.append(HistoryEntry(id=pk, role=role, content=content))
    return entries


_OUTCOMES = {
    PendingAction.Status.PENDING: "still waiting for the owner's approval; nothing has changed yet",
    PendingAction.Status.COMMITTED: "approved by the owner and done",
    PendingAction.Status.REJECTED: "rejected by the owner; nothing was changed",
    PendingAction.Status.EXPIRED: "expired without a decision; nothing was changed",
    PendingAction.Status.FAILED: "approved, but not done",
    PendingAction.Status.UNDONE: "done, then undone by the owner",
}


def outcome_note(action: PendingAction) -> str:
    """The line a later turn reads about a proposal it made (the seed report's outcome notes)."""
    outcome = _OUTCOMES[PendingAction.Status(action.status)]
    if action.status == PendingAction.Status.FAILED and action.error:
        outcome = f"{outcome}: {action.error}"
    return f"[Approval outcome: {action.summary} — {outcome}.]"


def _keywords(text: str) -> list[str]:
    seen: dict[str, None] = {}
    for word in _WORD.findall(text.lower()):
        if word not in _STOPWORDS:
            seen.setdefault(word)
    return list(seen)[:MAX_KEYWORDS]


def memory_select_for_turn(*, text: str, limit: int = MEMORY_LIMIT) -> list[str]:
    """Memories worth showing the model for this message: those sharing the most words with it,
    then the most recently changed. A keyword stand-in until semantic recall replaces it."""
    keywords = _keywords(text)
    chosen: dict[int, str] = {}
    if keywords:
        matches = (
            Memory.objects.live()
            .filter(reduce(or_, (Q(text__icontains=word) for word in keywords)))
            .order_by("-updated_at", "id")
            .values_list("id", "text")[:MEMORY_CANDIDATES]
        )
        # Most shared words first; sorted() keeps the most recent first among equals.
        chosen.update(
            sorted(matches, key=lambda row: -sum(word in row[1].lower() for word in keywords))[
                :limit
            ]
        )
    if len(chosen) < limit:
        recent = (
            Memory.objects.live()
            .exclude(pk__in=list(chosen))
            .order_by("-updated_at", "id")
            .values_list("id", "text")[: limit - len(chosen)]
        )
        chosen.update(recent)
    return list(chosen.values())
