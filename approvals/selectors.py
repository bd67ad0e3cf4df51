from __future__ import annotations

from django.db.models import QuerySet

from approvals.models import ApprovalEvent, PendingAction


def pending_action_list(
    *, status: str | None = None, conversation_id: int | None = None
) -> QuerySet[PendingAction]:
    actions = PendingAction.objects.all()
    if status:
        actions = actions.filter(status=status)
    if conversation_id is not None:
        actions = actions.filter(conversation_id=conversation_id)
    return actions


def pending_action_outcomes(*, action_ids: list[int]) -> dict[int, PendingAction]:
    """The current state of these actions, by id (for approval-outcome notes in history)."""
    return {a.pk: a for a in PendingAction.objects.filter(pk__in=action_ids)}


def approval_event_list(*, action_id: int | None = None) -> QuerySet[ApprovalEvent]:
    events = ApprovalEvent.objects.all()
    if action_id is not None:
        events = events.filter(action_ref=action_id)
    return events
