"""The approvals page (/approvals/): what waits for the owner, what was decided, the audit trail.
Approve, reject and undo post here and call the same services as the API (session only, as the
API's deciding routes are)."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone

from approvals import selectors, services
from approvals.models import PendingAction
from talorys.lib.errors import AppError
from talorys.web.pages import owner_page, page_of, run_action

BACK = "/approvals/"
Status = PendingAction.Status
# The states in the owner's words (the chat's approval card says the same).
STATE_WORDS = {
    Status.PENDING: "Waiting for you",
    Status.COMMITTED: "Done",
    Status.REJECTED: "Rejected",
    Status.EXPIRED: "Expired",
    Status.FAILED: "Failed",
    Status.UNDONE: "Undone",
    Status.WITHDRAWN: "Withdrawn",
}
STATE_TAGS = {Status.COMMITTED: "ok", Status.FAILED: "err", Status.PENDING: "warn"}
TABS = {"waiting": "Waiting", "decided": "Decided", "audit": "Audit trail"}


def state_words(action: PendingAction) -> str:
    status = selectors.pending_action_status(action)
    words = STATE_WORDS[status]
    return f"{words}: {action.error}" if status == Status.FAILED and action.error else words


@owner_page("GET")
def approvals_page(request: HttpRequest) -> HttpResponse:
    tab = request.GET.get("show") if request.GET.get("show") in TABS else "waiting"
    context: dict = {"tab": tab, "tabs": TABS.items(), "now": timezone.now()}
    if tab == "audit":
        context["page"] = page_of(request, selectors.approval_event_list())
    else:
        if tab == "waiting":
            actions = selectors.pending_action_list(statuses=[Status.PENDING])
        else:
            actions = selectors.pending_action_decided_list()
        page = page_of(request, actions)
        context["page"] = page
        context["cards"] = [
            {
                "action": action,
                "status": (status := selectors.pending_action_status(action)),
                "state": state_words(action),
                "tag": STATE_TAGS.get(status, ""),
                "diff": selectors.pending_action_diff(action=action),
            }
            for action in page.object_list
        ]
    return render(request, "approvals/list.html", context)


# The buttons of an approval's card, each the service the API's deciding route calls.
DECISIONS: dict[str, Callable[..., PendingAction]] = {
    "approve": services.pending_action_approve,
    "reject": services.pending_action_reject,
    "undo": services.pending_action_undo,
}


@owner_page("POST")
def approval_decide(request: HttpRequest, action_id: int, decision: str) -> HttpResponse:
    def act() -> PendingAction:
        action = DECISIONS[decision](action_id=action_id, user=request.user)
        # A commit that failed is recorded as failed (the service's transaction is over): the
        # owner is told it as an error, with its reason.
        if action.status == Status.FAILED:
            raise AppError(state_words(action))
        return action

    return run_action(
        request, act, back=BACK, done=lambda action: f"{state_words(action)}: {action.summary}"
    )
