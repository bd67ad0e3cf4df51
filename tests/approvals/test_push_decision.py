"""Approve or reject from the Web Push notification (approvals/push_decision.py): the push of a
waiting approval carries its Approve and Reject actions and a capability for each, which the
service worker posts back without the session. The capability is read here as a browser reads
it: from the push the local push service received, decrypted with the browser's keys. Each
refusal changes nothing."""

from __future__ import annotations

import datetime as dt
import json
import secrets
from typing import Any

import pytest
import time_machine
from django.test import Client
from django.utils import timezone

from approvals import services as approvals
from approvals.models import ApprovalEvent, DecisionCapability, PendingAction
from approvals.push_decision import (
    FORGED,
    REFUSALS_PER_APPROVAL,
    REFUSALS_PER_CAPABILITY,
    THROTTLED,
    USED,
)
from talorys.notifications import push
from talorys.notifications.models import Notification
from talorys.workspace import services
from talorys.workspace.models import Task
from tests.approvals.test_approvals import propose
from tests.automations.conftest import in_threads
from tests.notifications.servers import browser, push_service  # noqa: F401 (fixtures)


@pytest.fixture
def pushed(api, push_service, browser, eager, django_capture_on_commit_callbacks):  # noqa: F811
    """Propose deleting a task, and return the action and the push its browser decrypted."""
    subscribed = api.post("/api/push/subscriptions", browser.subscription(push_service.endpoint()))
    assert subscribed.status_code == 201, subscribed.content

    def propose_a_delete(title: str = "Old errand") -> tuple[PendingAction, dict[str, Any]]:
        task = services.task_create(title=title)
        seen = len(push_service.requests)
        with django_capture_on_commit_callbacks(execute=True):
            outcome = propose("delete_task", task_id=task.pk)
        action = PendingAction.objects.get(pk=outcome.result["action_id"])
        (request,) = push_service.requests[seen:]
        return action, browser.decrypt(request.body)

    return propose_a_delete


def decide(
    payload: dict[str, Any],
    decision: str,
    *,
    capability: str | None = None,
    url: str | None = None,
    client: Client | None = None,
    content_type: str = "application/json",
) -> Any:
    """POST as the service worker does: no cookie (a fresh client), JSON, the button's token."""
    body = {
        "decision": decision,
        "capability": payload["decide"]["capabilities"][decision]
        if capability is None
        else capability,
    }
    client = client or Client(enforce_csrf_checks=True)
    return client.post(
        url or payload["decide"]["url"], data=json.dumps(body), content_type=content_type
    )


def unchanged(action: PendingAction) -> None:
    """The refusal changed nothing: the action waits, its task is there, no capability spent,
    no decision audited."""
    action.refresh_from_db()
    assert action.status == "pending"
    assert Task.objects.live().filter(pk=action.target_id).exists()
    assert not DecisionCapability.objects.filter(action=action, used_at__isnull=False).exists()
    assert not ApprovalEvent.objects.filter(action_ref=action.pk).exclude(kind="proposed").exists()


def refusal(response: Any, status: int, code: str, message: str) -> None:
    assert response.status_code == status, response.content
    assert response.json() == {"error": {"code": code, "message": message}}


def test_the_push_carries_both_actions_and_opens_the_approval(pushed):
    action, payload = pushed()

    assert payload["url"] == f"/approvals/#approval-{action.pk}"
    assert payload["actions"] == [
        {"action": "approve", "title": "Approve"},
        {"action": "reject", "title": "Reject"},
    ]
    assert payload["decide"]["url"] == f"/api/approvals/{action.pk}/push-decision"
    tokens = payload["decide"]["capabilities"]
    assert set(tokens) == {"approve", "reject"} and tokens["approve"] != tokens["reject"]
    # Only their hashes are kept, bound to the action, its snapshot and its expiry.
    stored = DecisionCapability.objects.filter(action=action)
    assert {c.decision for c in stored} == {"approve", "reject"}
    assert not {c.token_hash for c in stored} & set(tokens.values())
    assert {(c.snapshot, c.expires_at, c.used_at) for c in stored} == {
        (action.snapshot, action.expires_at, None)
    }


def test_approve_from_the_notification_commits_audits_and_rewrites_it(pushed):
    action, payload = pushed()

    response = decide(payload, "approve")

    assert response.status_code == 200, response.content
    assert response.json() == {
        "action_id": action.pk,
        "status": "committed",
        "title": "Approved and done: Delete the task “Old errand”",
        "body": "You can undo it on the Approvals page for 30 days.",
    }
    action.refresh_from_db()
    assert action.status == "committed" and action.decided_by.get_username() == "owner"
    assert not Task.objects.live().filter(pk=action.target_id).exists()
    event = ApprovalEvent.objects.get(action_ref=action.pk, kind="committed")
    assert event.actor == "owner:owner via notification"
    notification = Notification.objects.get(source=f"approval:{action.pk}")
    assert notification.title == response.json()["title"] and notification.read_at is not None
    assert DecisionCapability.objects.get(action=action, decision="approve").used_at is not None


def test_reject_from_the_notification(pushed):
    action, payload = pushed()

    response = decide(payload, "reject")

    assert (response.status_code, response.json()["status"]) == (200, "rejected")
    assert response.json()["title"] == "Rejected: Delete the task “Old errand”"
    assert Task.objects.live().filter(pk=action.target_id).exists()
    assert ApprovalEvent.objects.get(action_ref=action.pk, kind="rejected").actor == (
        "owner:owner via notification"
    )


def test_a_used_capability_is_refused(pushed):
    action, payload = pushed()
    assert decide(payload, "approve").status_code == 200

    again = decide(payload, "approve")

    refusal(again, 409, "CONFLICT", USED)
    assert ApprovalEvent.objects.filter(action_ref=action.pk, kind="committed").count() == 1
    # The other button is spent with the decision: its action is no longer waiting.
    refusal(
        decide(payload, "reject"), 409, "CONFLICT", "This approval was already decided: committed."
    )
    assert DecisionCapability.objects.get(action=action, decision="reject").used_at is None


def test_an_expired_capability_is_refused(pushed):
    action, payload = pushed()

    with time_machine.travel(action.expires_at + dt.timedelta(seconds=1)):
        response = decide(payload, "approve")

    refusal(
        response,
        409,
        "CONFLICT",
        "This notification's button expired. Open the approval to decide.",
    )
    action.refresh_from_db()
    assert Task.objects.live().filter(pk=action.target_id).exists()
    assert not DecisionCapability.objects.filter(used_at__isnull=False).exists()


def test_an_action_proposed_again_outlives_its_old_buttons_but_they_still_expire(pushed):
    """A proposal made again waits longer; the old push's buttons expire when it was to."""
    action, payload = pushed()
    action.expires_at = timezone.now() + dt.timedelta(hours=1)
    action.save(update_fields=["expires_at"])
    minted = DecisionCapability.objects.filter(action=action)[0].expires_at

    with time_machine.travel(minted + dt.timedelta(seconds=1)):
        response = decide(payload, "approve")

    assert response.status_code == 409
    unchanged(action)


def test_an_action_decided_on_the_page_first_is_refused(pushed, api):
    action, payload = pushed()
    assert api.post(f"/api/approvals/{action.pk}/reject").status_code == 200

    response = decide(payload, "approve")

    refusal(response, 409, "CONFLICT", "This approval was already decided: rejected.")
    action.refresh_from_db()
    assert action.status == "rejected"
    assert Task.objects.live().filter(pk=action.target_id).exists()
    assert not DecisionCapability.objects.filter(used_at__isnull=False).exists()


def test_a_forged_capability_is_refused(pushed):
    action, payload = pushed()

    for forged in (secrets.token_urlsafe(32), "x", "a" * 64):
        response = decide(payload, "approve", capability=forged)
        refusal(
            response,
            403,
            "FORBIDDEN",
            "This notification's button is not valid. Open the approval to decide.",
        )
    unchanged(action)


def test_another_actions_capability_is_refused(pushed):
    action, payload = pushed("Old errand")
    other, other_payload = pushed("Other errand")

    response = decide(
        payload, "approve", capability=other_payload["decide"]["capabilities"]["approve"]
    )

    refusal(
        response,
        403,
        "FORBIDDEN",
        "This button was made for another decision. Open the approval to decide.",
    )
    # Nor does this action's token decide the other one at the other one's address.
    assert decide(payload, "approve", url=other_payload["decide"]["url"]).status_code == 403
    unchanged(action)
    unchanged(other)


def test_the_reject_capability_cannot_approve(pushed):
    action, payload = pushed()

    response = decide(payload, "approve", capability=payload["decide"]["capabilities"]["reject"])

    assert response.status_code == 403
    assert response.json()["error"]["message"].startswith("This button was made for another")
    unchanged(action)


def test_a_capability_for_another_proposal_is_refused(pushed):
    """The capability is bound to the action's snapshot when it was minted (defence in depth: a
    waiting action keeps its snapshot, so this stands for a row changed behind our back)."""
    action, payload = pushed()
    PendingAction.objects.filter(pk=action.pk).update(snapshot="0" * 64)

    response = decide(payload, "approve")

    refusal(
        response,
        409,
        "CONFLICT",
        "This approval changed since the notification was sent. Open it to decide.",
    )
    unchanged(action)


def test_a_target_changed_since_fails_the_commit_as_on_the_page(pushed):
    action, payload = pushed()
    services.task_update(task_id=action.target_id, title="Renamed errand")

    response = decide(payload, "approve")

    assert response.status_code == 200, response.content
    assert response.json()["status"] == "failed"
    assert response.json()["title"] == "Approved but failed: Delete the task “Old errand”"
    assert response.json()["body"] == approvals.STALE_MESSAGE
    assert Task.objects.live().filter(pk=action.target_id).exists()
    failed = ApprovalEvent.objects.get(action_ref=action.pk, kind="failed")
    assert failed.actor == "owner:owner via notification"


def test_the_session_is_no_credential_here(pushed, api):
    """The owner's own session and CSRF token do not stand in for the capability."""
    action, payload = pushed()

    missing = api.post(payload["decide"]["url"], {"decision": "approve", "capability": ""})
    wrong = api.post(payload["decide"]["url"], {"decision": "approve", "capability": "nope"})

    assert missing.status_code == 422
    assert missing.json()["error"]["code"] == "VALIDATION"
    assert wrong.status_code == 403
    unchanged(action)


def test_only_json_is_taken(pushed):
    """A cross-site form (or a no-preflight text/plain fetch) cannot post the decision."""
    action, payload = pushed()

    as_text = decide(payload, "approve", content_type="text/plain")
    as_form = Client().post(
        payload["decide"]["url"],
        {"decision": "approve", "capability": payload["decide"]["capabilities"]["approve"]},
    )

    refusal(as_text, 415, "UNSUPPORTED_MEDIA_TYPE", "Send the decision as application/json.")
    assert as_form.status_code in (400, 415, 422)
    # A cross-site page's JSON fetch asks first; nothing here allows it.
    preflight = Client().options(
        payload["decide"]["url"],
        headers={
            "Origin": "https://elsewhere.example",
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "content-type",
        },
    )
    assert preflight.status_code == 405
    assert not any(name.lower().startswith("access-control-") for name in preflight.headers)
    unchanged(action)


def test_forged_decisions_never_block_the_genuine_button(pushed):
    """Refusals are throttled per approval, not per client address: a flood of forged tokens
    from the owner's own address is answered 429, and the genuine button still decides."""
    action, payload = pushed()
    for _ in range(REFUSALS_PER_APPROVAL):
        assert decide(payload, "approve", capability=secrets.token_urlsafe(32)).status_code == 403

    throttled = decide(payload, "approve", capability=secrets.token_urlsafe(32))
    unchanged(action)
    response = decide(payload, "approve")

    assert response.status_code == 200, response.content
    assert response.json()["status"] == "committed"
    refusal(throttled, 429, "RATE_LIMITED", THROTTLED)


def test_the_throttle_is_per_approval(pushed):
    """A flood aimed at one approval leaves another approval's refusals as they were."""
    _action, payload = pushed("Old errand")
    _other, other_payload = pushed("Other errand")
    for _ in range(REFUSALS_PER_APPROVAL + 1):
        decide(payload, "approve", capability=secrets.token_urlsafe(32))

    forged = decide(other_payload, "approve", capability=secrets.token_urlsafe(32))

    refusal(forged, 403, "FORBIDDEN", FORGED)
    assert decide(other_payload, "reject").status_code == 200


def test_a_capability_refused_again_and_again_is_throttled(pushed):
    """A real capability replayed (used, so refused each time) is throttled on its own count,
    well before its approval's; the other approvals' buttons are untouched."""
    _action, payload = pushed("Old errand")
    _other, other_payload = pushed("Other errand")
    assert decide(payload, "reject").status_code == 200
    for _ in range(REFUSALS_PER_CAPABILITY):
        refusal(decide(payload, "reject"), 409, "CONFLICT", USED)

    refusal(decide(payload, "reject"), 429, "RATE_LIMITED", THROTTLED)
    assert decide(other_payload, "approve").status_code == 200


def test_a_decided_approvals_push_carries_no_buttons(pushed):
    action, _payload = pushed()
    approvals.pending_action_reject(action_id=action.pk, user=None)
    notification = Notification.objects.get(source=f"approval:{action.pk}")

    payload = json.loads(push._payload(notification))

    assert "actions" not in payload and "decide" not in payload
    assert payload["url"] == f"/approvals/#approval-{action.pk}"


def test_expired_capabilities_are_pruned(pushed):
    action, _payload = pushed()

    with time_machine.travel(action.expires_at + dt.timedelta(days=1, seconds=1)):
        approvals.pending_actions_prune()

    assert not DecisionCapability.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_two_uses_of_one_capability_at_once_decide_once(
    needs_postgres,
    owner,
    push_service,  # noqa: F811
    browser,  # noqa: F811
    eager,
):
    from tests.conftest import ApiClient

    api = ApiClient(Client(enforce_csrf_checks=True))
    assert api.login().status_code == 200
    assert (
        api.post(
            "/api/push/subscriptions", browser.subscription(push_service.endpoint())
        ).status_code
        == 201
    )
    task = services.task_create(title="Old errand")
    action_id = propose("delete_task", task_id=task.pk).result["action_id"]
    (request,) = push_service.requests
    payload = browser.decrypt(request.body)

    def use() -> tuple[int, str]:
        response = decide(payload, "approve")
        return response.status_code, response.json().get("error", {}).get("message", "")

    answers = in_threads(use, use)

    # The second waited for the first's spending of the capability, then found it spent.
    assert sorted(answers) == [(200, ""), (409, USED)]
    assert ApprovalEvent.objects.filter(action_ref=action_id, kind="committed").count() == 1
    assert PendingAction.objects.get(pk=action_id).status == "committed"


@pytest.mark.django_db(transaction=True)
def test_approve_and_reject_buttons_pressed_at_once_decide_once(
    needs_postgres,
    owner,
    push_service,  # noqa: F811
    browser,  # noqa: F811
    eager,
):
    from tests.conftest import ApiClient

    api = ApiClient(Client(enforce_csrf_checks=True))
    assert api.login().status_code == 200
    subscribed = api.post("/api/push/subscriptions", browser.subscription(push_service.endpoint()))
    assert subscribed.status_code == 201
    task = services.task_create(title="Old errand")
    action_id = propose("delete_task", task_id=task.pk).result["action_id"]
    (request,) = push_service.requests
    payload = browser.decrypt(request.body)

    statuses = in_threads(
        lambda: decide(payload, "approve").status_code,
        lambda: decide(payload, "reject").status_code,
    )

    assert sorted(statuses) == [200, 409]
    decided = ApprovalEvent.objects.filter(action_ref=action_id).exclude(kind="proposed")
    assert decided.count() == 1
    # The refused one's capability was not spent: its refusal rolled back.
    assert DecisionCapability.objects.filter(used_at__isnull=False).count() == 1
