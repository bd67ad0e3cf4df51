"""Reads of conversations, and what a turn reads to build its context."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from typing import Any
from zoneinfo import ZoneInfo

from django.db.models import (
    Count,
    Exists,
    Func,
    IntegerField,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    Sum,
)
from django.db.models.expressions import Combinable
from django.db.models.functions import Coalesce, TruncDate

from agent.context import HistoryEntry, client_history_as_data, imported_as_data
from agent.models import Conversation, Message, Origin
from approvals.models import PendingAction
from approvals.selectors import pending_action_outcomes, pending_action_status
from files.models import File
from memory.recall.sources import Doc, RecallSource
from talorys.history.models import Change
from talorys.history.selectors import change_list, changed_since
from talorys.lib.errors import NotFound

HISTORY_LIMIT = 200


def shown_messages() -> QuerySet[Message]:
    """Messages a regenerate or an edit has not replaced: what the page and the model see."""
    return Message.objects.filter(replaced_at__isnull=True)


def conversation_list(*, q: str | None = None) -> QuerySet[Conversation]:
    """Conversations not in the bin, newest exchange first; with ``q``, those whose title or a
    shown message holds it (any case)."""
    conversations = Conversation.objects.live()
    if q:
        said = shown_messages().filter(conversation=OuterRef("pk"), content__icontains=q)
        conversations = conversations.filter(Q(title__icontains=q) | Exists(said))
    return conversations


def conversation_get(*, conversation_id: int) -> Conversation:
    conversation = Conversation.objects.live().filter(pk=conversation_id).first()
    if conversation is None:
        raise NotFound(f"Conversation {conversation_id} does not exist.")
    return conversation


def conversation_model(*, conversation_id: int) -> str:
    """The model a conversation asks ("" for the owner's default, or when it does not exist)."""
    found = Conversation.objects.live().filter(pk=conversation_id).values_list("model", flat=True)
    return found.first() or ""


def conversation_with_messages(*, conversation_id: int) -> Conversation:
    """The conversation with its shown messages (the active branch), each carrying ``changes``:
    what the model changed in that reply's turn (revertable from /api/changes/{id}/revert), and
    ``siblings``: its own id and those of the messages beside it, the other branches there."""
    conversation = (
        Conversation.objects.live()
        .filter(pk=conversation_id)
        .prefetch_related(
            Prefetch("messages", queryset=shown_messages().order_by("id")),
            # A binned file is still shown on the message that carried it (marked so); the
            # files in the order they were uploaded.
            Prefetch("messages__attachments", queryset=File.objects.order_by("id")),
        )
        .first()
    )
    if conversation is None:
        raise NotFound(f"Conversation {conversation_id} does not exist.")
    messages = list(conversation.messages.all())
    by_message: dict[int | None, list[Change]] = {}
    for change in change_list(message_ids=[m.pk for m in messages]).order_by("id"):
        by_message.setdefault(change.message_id, []).append(change)
    siblings = sibling_ids(conversation_id=conversation_id)
    for message in messages:
        message.changes = by_message.get(message.pk, [])
        message.siblings = siblings[message.parent_id]
    return conversation


def sibling_ids(*, conversation_id: int) -> dict[int | None, list[int]]:
    """Per parent id (None: the first messages), its children's ids, oldest first: the branches
    a message's page offers to move between (agent/branches.py)."""
    by_parent: dict[int | None, list[int]] = defaultdict(list)
    for pk, parent_id in (
        Message.objects.filter(conversation_id=conversation_id)
        .order_by("id")
        .values_list("pk", "parent_id")
    ):
        by_parent[parent_id].append(pk)
    return by_parent


def turn_history(
    *, conversation_id: int, after_id: int | Combinable | None
) -> tuple[list[HistoryEntry], bool]:
    """The newest messages a turn may show the model, oldest first: owner messages and complete
    replies after the running summary (``after_id``: its ``summary_upto``, or an expression of
    it), none replaced, at most HISTORY_LIMIT of them. A reply that proposed a
    destructive action carries a note of that action's outcome as it stands now.

    And whether the conversation holds any proposal at all (read in the same statement):
    without one it has no outcome notes to read."""
    rows = list(
        shown_messages()
        .filter(conversation_id=conversation_id, id__gt=after_id or 0)
        .filter(
            Q(role=Message.Role.USER)
            | Q(role=Message.Role.ASSISTANT, status=Message.Status.COMPLETE)
        )
        .annotate(proposals=Exists(PendingAction.objects.filter(conversation_id=conversation_id)))
        .order_by("-id")
        .values_list("id", "role", "content", "tool_activity", "origin", "proposals")[
            :HISTORY_LIMIT
        ]
    )
    # No row, no answer: read the notes, as if there were proposals.
    proposals = bool(rows[0][5]) if rows else True
    client = ""
    if any(row[4] == Origin.CLIENT for row in rows):  # a /v1 client's history: name its token
        client = _client_token_name(conversation_id)
    return _history_entries([row[:5] for row in rows], client=client), proposals


def _client_token_name(conversation_id: int) -> str:
    """The name of the token whose /v1 client started the conversation ("" once deleted)."""
    names = Conversation.objects.filter(pk=conversation_id).values_list("api_token__name")
    return next((name for (name,) in names if name), "")


def _history_entries(rows: list[tuple[Any, ...]], *, client: str = "") -> list[HistoryEntry]:
    action_ids = [
        activity["action_id"]
        for _pk, _role, _content, activities, _origin in rows
        for activity in activities or []
        if activity.get("action_id")
    ]
    outcomes = pending_action_outcomes(action_ids=action_ids) if action_ids else {}
    entries = []
    for pk, role, content, activities, origin in reversed(rows):
        if origin == Origin.IMPORT:
            content = imported_as_data(content)
        elif origin == Origin.CLIENT:
            content = client_history_as_data(content, token_name=client)
        notes = [
            outcome_note(outcomes[a["action_id"]])
            for a in activities or []
            if a.get("action_id") in outcomes
        ]
        content = "\n\n".join(part for part in [content, *notes] if part)
        entries.append(HistoryEntry(id=pk, role=Message.Role(role), content=content))
    return entries


def first_exchange(*, conversation_id: int, message_id: int) -> tuple[str, str] | None:
    """The owner's message and the reply ``message_id`` to it, when that reply is the
    conversation's first complete one and the title is still the first words (runner/title.py)."""
    if (
        not Conversation.objects.live()
        .filter(pk=conversation_id, title_source=Conversation.TitleSource.MESSAGE)
        .exists()
    ):
        return None
    conversation = shown_messages().filter(conversation_id=conversation_id)
    first_reply = (
        conversation.filter(role=Message.Role.ASSISTANT, status=Message.Status.COMPLETE)
        .order_by("id")
        .values_list("pk", "content")
        .first()
    )
    if first_reply is None or first_reply[0] != message_id:
        return None
    owner_text = (
        conversation.filter(role=Message.Role.USER, pk__lt=message_id)
        .order_by("-id")
        .values_list("content", flat=True)
        .first()
    )
    return (owner_text or "", first_reply[1])


_OUTCOMES = {
    PendingAction.Status.PENDING: "still waiting for the owner's approval; nothing has changed yet",
    PendingAction.Status.COMMITTED: "approved by the owner and done",
    PendingAction.Status.REJECTED: "rejected by the owner; nothing was changed",
    PendingAction.Status.EXPIRED: "expired without a decision; nothing was changed",
    PendingAction.Status.FAILED: "approved, but not done",
    PendingAction.Status.UNDONE: "done, then undone by the owner",
    PendingAction.Status.WITHDRAWN: "replaced by a newer proposal; nothing was changed",
}


def outcome_notes_outside(
    *, conversation_id: int, shown_from_id: int | None, limit: int = 10
) -> list[str]:
    """Outcome notes of this conversation's proposals whose reply the model will not see: a
    reply that ended in error or was cancelled, or one evicted from the window. Oldest first.

    The model sees the complete replies from ``shown_from_id`` on (the window keeps the newest
    entries of ``turn_history``; None: no entry), so they are named by a subquery, not
    by a list of ids the query would have to carry."""
    actions = PendingAction.objects.filter(conversation_id=conversation_id)
    if shown_from_id is not None:
        shown = shown_messages().filter(
            conversation_id=conversation_id,
            role=Message.Role.ASSISTANT,
            status=Message.Status.COMPLETE,
            id__gte=shown_from_id,
        )
        actions = actions.exclude(message_id__in=shown.values("id"))
    actions = actions.order_by("-created_at", "-id")[:limit]
    return [outcome_note(action) for action in reversed(actions)]


def outcome_note(action: PendingAction) -> str:
    """The line a later turn reads about a proposal it made: what became of it, and why (an
    expiry that is due reads as expired before beat writes it)."""
    status = pending_action_status(action)
    outcome = _OUTCOMES[status]
    if status == PendingAction.Status.FAILED and action.error:
        outcome = f"{outcome}: {action.error}"
    return f"[Approval outcome: {action.summary} — {outcome}.]"


# --- recall over past conversations (memory/recall/) -------------------------------------------


def recallable_messages() -> QuerySet[Message]:
    """The owner's messages and complete replies of conversations not in the bin, unless a
    regenerate or an edit replaced them."""
    return (
        shown_messages()
        .filter(conversation__deleted_at__isnull=True, status=Message.Status.COMPLETE)
        .exclude(content="")
    )


def messages_changed_since(since: dt.datetime) -> dict[int, dt.datetime]:
    """Messages written since ``since`` (a reply when it ends), and those of conversations
    binned or restored since, each with when."""
    # No ordering: Message's default (conversation, id) would steer SQLite off the updated_at
    # index into a scan of every message.
    changed = dict(
        Message.objects.filter(updated_at__gte=since).order_by().values_list("pk", "updated_at")
    )
    conversations = changed_since(kinds=["conversation"], since=since)["conversation"]
    if conversations:
        for pk, conversation_id in (
            Message.objects.filter(conversation_id__in=conversations)
            .order_by()
            .values_list("pk", "conversation_id")
        ):
            changed[pk] = max(changed.get(pk, since), conversations[conversation_id])
    return changed


def message_recall_source() -> RecallSource:
    return RecallSource(
        kind="message",
        live=recallable_messages,
        doc=lambda m: Doc(
            object_id=m.pk,
            title="",
            body=m.content,
            parent_id=m.conversation_id,
            when=m.created_at,
        ),
        changed_since=messages_changed_since,
        columns=("content", "conversation_id", "created_at"),
    )


class _JsonArrayLength(Func):
    """The length of a JSON array column: ``jsonb_array_length`` on PostgreSQL,
    ``json_array_length`` on SQLite."""

    function = "json_array_length"
    output_field = IntegerField()

    def as_postgresql(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        return self.as_sql(compiler, connection, function="jsonb_array_length", **extra)


def turn_counts_by_day(*, since: dt.datetime, zone: ZoneInfo) -> dict[dt.date, dict[str, int]]:
    """Per day in ``zone``, from ``since``: the turns (live assistant replies; imported ones were
    never turns here) by status as ``turns_<status>``, their ``tool_calls`` (each reply keeps its
    calls in ``tool_activity``) and ``provider_errors`` (replies that failed PROVIDER_*). One
    query."""
    by_status = {
        f"turns_{status}": Count("pk", filter=Q(status=status)) for status in Message.Status.values
    }
    rows = (
        Message.objects.filter(
            role=Message.Role.ASSISTANT, origin=Origin.LIVE, created_at__gte=since
        )
        .annotate(day=TruncDate("created_at", tzinfo=zone))
        .values("day")
        .annotate(
            **by_status,
            tool_calls=Coalesce(Sum(_JsonArrayLength("tool_activity")), 0),
            provider_errors=Count("pk", filter=Q(error_code__startswith="PROVIDER_")),
        )
        .order_by()
    )
    return {row.pop("day"): row for row in rows}
