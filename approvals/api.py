from typing import Any

from django.db.models import QuerySet
from django.http import HttpRequest
from ninja import Query, Router
from ninja.pagination import paginate

from approvals import push_decision, selectors, services
from approvals.models import ApprovalEvent, PendingAction
from approvals.schemas import (
    ApprovalEventOut,
    ApprovalFilters,
    AuditFilters,
    PendingActionOut,
    PushDecisionIn,
    PushDecisionOut,
)
from talorys.accounts.auth import owner_session_auth, request_owner
from talorys.lib.errors import UnsupportedMediaType
from talorys.web.pagination import Pagination
from talorys.web.schemas import ErrorOut

router = Router(tags=["approvals"])

# Deciding is the owner's own act, in the app: a personal API token (a script) may read the
# approvals but never approve, reject or undo one, so a leaked token cannot wave deletions through.


@router.get("/approvals", response=list[PendingActionOut])
@paginate(Pagination)
def approval_list(request: HttpRequest, filters: Query[ApprovalFilters]) -> QuerySet[PendingAction]:
    """Pending approvals by default; `status=all` lists every one. An approval past its expiry
    is listed as expired (and no longer pending) as soon as it is due."""
    status = filters.status or PendingAction.Status.PENDING
    statuses = None if status == "all" else [status]
    return selectors.pending_action_list(statuses=statuses, conversation_id=filters.conversation_id)


@router.get("/approvals/audit", response=list[ApprovalEventOut])
@paginate(Pagination)
def approval_audit(request: HttpRequest, filters: Query[AuditFilters]) -> QuerySet[ApprovalEvent]:
    return selectors.approval_event_list(action_id=filters.action_id)


@router.get("/approvals/{int:action_id}", response=PendingActionOut)
def approval_get(request: HttpRequest, action_id: int) -> PendingAction:
    return selectors.pending_action_get(action_id=action_id)


@router.post(
    "/approvals/{int:action_id}/approve", auth=owner_session_auth, response=PendingActionOut
)
def approval_approve(request: HttpRequest, action_id: int) -> PendingAction:
    return services.pending_action_approve(action_id=action_id, user=request_owner(request))


@router.post(
    "/approvals/{int:action_id}/reject", auth=owner_session_auth, response=PendingActionOut
)
def approval_reject(request: HttpRequest, action_id: int) -> PendingAction:
    return services.pending_action_reject(action_id=action_id, user=request_owner(request))


@router.post("/approvals/{int:action_id}/undo", auth=owner_session_auth, response=PendingActionOut)
def approval_undo(request: HttpRequest, action_id: int) -> PendingAction:
    return services.pending_action_undo(action_id=action_id, user=request_owner(request))


# From the notification: no session, no cookie, no CSRF token. The capability in the body, which
# only that push carried, is the credential (approvals/push_decision.py, with
# the threat model). JSON only: a cross-site page can send JSON only after a CORS preflight,
# which is never answered.
@router.post(
    "/approvals/{int:action_id}/push-decision",
    auth=None,
    # Beside what every operation answers: a capability refused (403: not ours, or for another
    # action or decision; 409: used, expired, decided, changed), not JSON (415), throttled (429).
    response={200: PushDecisionOut, frozenset({403, 409, 415, 429}): ErrorOut},
)
def approval_push_decision(
    request: HttpRequest, action_id: int, data: PushDecisionIn
) -> dict[str, Any]:
    if request.content_type != "application/json":
        raise UnsupportedMediaType("Send the decision as application/json.")
    action = push_decision.push_decide_throttled(
        action_id=action_id,
        decision=data.decision,
        token=data.capability,
    )
    return push_decision.push_decision_outcome(action)
