"""Reads of approvals: one action, the lists, a rewrite's diff, the audit trail.

An action's status is read as of now (``pending_action_status``): a pending one past its expiry
reads as expired before the beat job (approvals.tasks.expire_pending_actions, every minute)
writes it, so no read ever writes. The services that decide re-check the expiry under the row
lock and record it there."""

from __future__ import annotations

import datetime as dt

from django.db.models import Case, OuterRef, Q, QuerySet, Subquery, TextField, Value, When
from django.db.models.functions import Coalesce
from django.utils import timezone

from approvals.models import ApprovalEvent, PendingAction
from talorys.lib.diff import DiffRun, text_diff
from talorys.lib.errors import NotFound
from talorys.workspace.models import Note

Status = PendingAction.Status

# The tools whose action replaces a text: the model and field the text lives in. The new text
# is the payload's ``content`` (what ``prepare`` stored); after the commit the old text is the
# result's ``previous_content`` (what ``commit`` kept for undo).
REWRITES = {"rewrite_note": (Note, "content")}


def _with_current_text(actions: QuerySet[PendingAction]) -> QuerySet[PendingAction]:
    """Each rewrite's target text as it is now, read in the same query (no query per row)."""
    whens = [
        When(
            tool=tool,
            then=Subquery(model.objects.filter(pk=OuterRef("target_id")).values(field)[:1]),
        )
        for tool, (model, field) in REWRITES.items()
    ]
    return actions.annotate(
        current_text=Case(*whens, default=Value(None), output_field=TextField())
    )


def pending_action_status(action: PendingAction, *, now: dt.datetime | None = None) -> Status:
    """The action's status as of ``now``: a pending action past its expiry is expired, whether
    or not the beat job has written that yet."""
    if action.status == Status.PENDING and action.expires_at <= (now or timezone.now()):
        return Status.EXPIRED
    return Status(action.status)


def _status_in(statuses: list[str], *, now: dt.datetime) -> Q:
    """The rows whose status as of ``now`` (``pending_action_status``) is one of ``statuses``."""
    due = Q(status=Status.PENDING, expires_at__lte=now)
    stored = Q(status__in=statuses)
    if Status.PENDING in statuses:
        stored &= ~due
    return stored | due if Status.EXPIRED in statuses else stored


def pending_action_get(*, action_id: int) -> PendingAction:
    action = PendingAction.objects.filter(pk=action_id).first()
    if action is None:
        raise NotFound(f"Approval {action_id} does not exist.")
    return action


def pending_action_list(
    *, statuses: list[str] | None = None, conversation_id: int | None = None
) -> QuerySet[PendingAction]:
    """The actions with any of these statuses as of now (``pending_action_status``): a
    pending action past its expiry is listed as expired, never as waiting."""
    actions = PendingAction.objects.all()
    if statuses:
        actions = actions.filter(_status_in(statuses, now=timezone.now()))
    if conversation_id is not None:
        actions = actions.filter(conversation_id=conversation_id)
    return _with_current_text(actions)


def pending_action_decided_list() -> QuerySet[PendingAction]:
    """Every action no longer waiting, the latest decided first; an expiry not yet written
    counts as decided when it fell due."""
    decided = [value for value in Status.values if value != Status.PENDING]
    return pending_action_list(statuses=decided).order_by(
        Coalesce("decided_at", "expires_at").desc(), "-id"
    )


def pending_action_diff(*, action: PendingAction) -> list[DiffRun]:
    """The word diff of the text an action rewrites: the target's text against the proposed one.

    Before the commit the target's text is what it holds now (an approval of a changed target
    fails, so that is what the owner would replace); once committed (and after an undo) it is
    the text the commit replaced. Empty for an action that rewrites no text, or whose target
    is gone for good."""
    if action.tool not in REWRITES:
        return []
    after = (action.payload or {}).get("content")
    if not isinstance(after, str):
        return []
    before = (action.result or {}).get("previous_content")
    if not isinstance(before, str):
        before = _current_text(action)
    return [] if before is None else text_diff(before, after)


def _current_text(action: PendingAction) -> str | None:
    annotated = action.__dict__
    if "current_text" in annotated:  # read with the list (pending_action_list)
        return annotated["current_text"]
    model, field = REWRITES[action.tool]
    return model.objects.filter(pk=action.target_id).values_list(field, flat=True).first()


def pending_action_outcomes(*, action_ids: list[int]) -> dict[int, PendingAction]:
    """The current state of these actions, by id (for approval-outcome notes in history)."""
    return {a.pk: a for a in PendingAction.objects.filter(pk__in=action_ids)}


def approval_event_list(*, action_id: int | None = None) -> QuerySet[ApprovalEvent]:
    events = ApprovalEvent.objects.all()
    if action_id is not None:
        events = events.filter(action_ref=action_id)
    return events
