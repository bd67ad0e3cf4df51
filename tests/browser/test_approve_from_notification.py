"""Approving from the notification in a real browser (Debian's Chromium through Playwright,
live daphne): the service worker shows an approval's push with its Approve and Reject actions,
and its decide path (what a click on Approve runs, static/talorys/sw.js) posts the push's
capability without the session, then shows what happened in the notification's place.

The push reaches the worker through DevTools, as Chromium's push service would deliver it (the
same route as tests/browser/test_notifications.py). A click on a notification's action button
cannot be made from DevTools, so the test calls the function the click handler runs, in the
worker itself."""

from __future__ import annotations

import pytest

from approvals.models import ApprovalEvent, DecisionCapability, PendingAction
from approvals.push_decision import USED
from talorys.notifications import push
from talorys.notifications.models import Notification
from talorys.workspace import services
from talorys.workspace.models import Task
from tests.approvals.test_approvals import propose
from tests.browser.conftest import active_service_worker, in_a_thread

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]

SHOWN = """async () => {
    for (let i = 0; i < 30; i++) {
        const shown = await self.registration.getNotifications();
        if (shown.length) {
            return shown.map((n) => ({
                title: n.title, body: n.body, url: n.data.url,
                actions: n.actions.map((a) => a.action),
            }));
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return [];
}"""

DECIDE = """async ([decision, notification]) => {
    const [shown] = await self.registration.getNotifications();
    // The notification as it was pushed (kept by the test), or the one shown now.
    const target = notification ? {title: notification.title, data: notification.data} : shown;
    return await decideFromNotification(target, decision);
}"""

KEPT = """async () => {
    const [shown] = await self.registration.getNotifications();
    return {title: shown.title, data: shown.data};
}"""


def _propose_delete(task_id: int) -> int:
    return in_a_thread(lambda: propose("delete_task", task_id=task_id).result["action_id"])


def _deliver(cdp, worker, registration, live_server_url, data: str) -> list[dict]:
    shown: list[dict] = []
    for _ in range(3):  # DevTools' delivery is best effort, like a push service's
        cdp.send(
            "ServiceWorker.deliverPushMessage",
            {"origin": live_server_url, "registrationId": registration, "data": data},
        )
        shown = worker.evaluate(SHOWN)
        if shown:
            break
    return shown


def test_approve_from_the_notification_in_chromium(page, live_server_url):
    cdp, registration, worker = active_service_worker(page, live_server_url)
    task = services.task_create(title="Old errand")
    action = PendingAction.objects.get(pk=_propose_delete(task.pk))
    notification = Notification.objects.get(source=f"approval:{action.pk}")

    # Exactly what push.py encrypts for a browser (with fresh capabilities).
    shown = _deliver(cdp, worker, registration, live_server_url, push._payload(notification))

    assert shown == [
        {
            "title": "Waiting for your approval: Delete the task “Old errand”",
            "body": notification.body,
            "url": f"/approvals/#approval-{action.pk}",
            "actions": ["approve", "reject"],
        }
    ]
    pushed = worker.evaluate(KEPT)

    decided = worker.evaluate(DECIDE, ["approve", None])

    assert decided == {
        "title": "Approved and done: Delete the task “Old errand”",
        "body": "You can undo it on the Approvals page for 30 days.",
    }
    action.refresh_from_db()
    assert action.status == "committed"
    assert not Task.objects.live().filter(pk=task.pk).exists()
    event = ApprovalEvent.objects.get(action_ref=action.pk, kind="committed")
    assert event.actor == "owner:owner via notification"
    # The notification now says what happened, with no buttons left.
    assert worker.evaluate(SHOWN) == [
        {
            "title": decided["title"],
            "body": decided["body"],
            "url": f"/approvals/#approval-{action.pk}",
            "actions": [],
        }
    ]

    # The same button again (a second click, a copy of the push): refused, and said so.
    again = worker.evaluate(DECIDE, ["approve", pushed])

    assert again == {"title": "Could not approve: Delete the task “Old errand”", "body": USED}
    assert ApprovalEvent.objects.filter(action_ref=action.pk, kind="committed").count() == 1
    # The other button's capability was not spent, and is refused all the same.
    rejected = worker.evaluate(DECIDE, ["reject", pushed])
    assert rejected == {
        "title": "Could not reject: Delete the task “Old errand”",
        "body": "This approval was already decided: committed.",
    }
    assert DecisionCapability.objects.get(action=action, decision="reject").used_at is None
