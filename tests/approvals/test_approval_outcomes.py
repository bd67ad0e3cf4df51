"""An approval's notification follows the approval: once it is decided, undone or expired it says
what happened instead of asking, is read, and open pages receive the new text and a sync about
the approval (their cards look again)."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Callable
from typing import Any

import pytest
import time_machine
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.db import connection
from django.test import Client
from django.utils import timezone

from approvals import services as approvals
from approvals.models import PendingAction
from talorys.lib.errors import Conflict
from talorys.notifications import services as notify
from talorys.notifications.models import Notification
from talorys.workspace import services
from tests.approvals.test_approvals import propose
from tests.notifications.test_live_notifications import socket
from tests.waiting import HANG_SECONDS

QUIET_SECONDS = 0.3
SUMMARY = "Delete the task “Call the bank”"


@pytest.fixture
def task(db):
    return services.task_create(title="Call the bank")


def proposed(task) -> PendingAction:
    return PendingAction.objects.get(pk=propose("delete_task", task_id=task.pk).result["action_id"])


def notification_of(action: PendingAction) -> Notification:
    return Notification.objects.get(source=f"approval:{action.pk}")


def unread(api) -> int:
    return api.get("/api/notifications?unread=true&limit=1").json()["count"]


def test_a_waiting_approval_asks_and_is_unread(api, task):
    action = proposed(task)

    notification = notification_of(action)
    assert notification.title == f"Waiting for your approval: {SUMMARY}"
    assert notification.read_at is None
    assert unread(api) == 1


def test_approved_and_done(api, owner, task):
    action = proposed(task)

    approvals.pending_action_approve(action_id=action.pk, user=owner)

    notification = notification_of(action)
    assert notification.title == f"Approved and done: {SUMMARY}"
    assert notification.body == "You can undo it on the Approvals page for 30 days."
    assert notification.read_at is not None  # it needs nothing more from the owner
    assert unread(api) == 0
    assert Notification.objects.count() == 1  # rewritten, not a second one


def test_approved_but_failed_says_why(owner, task):
    action = proposed(task)
    services.task_update(task_id=task.pk, title="Call the bank today")  # changed since

    approvals.pending_action_approve(action_id=action.pk, user=owner)

    notification = notification_of(action)
    assert notification.title == f"Approved but failed: {SUMMARY}"
    assert notification.body == approvals.STALE_MESSAGE
    assert notification.read_at is not None


def test_rejected(owner, task):
    action = proposed(task)

    approvals.pending_action_reject(action_id=action.pk, user=owner)

    notification = notification_of(action)
    assert (notification.title, notification.body) == (f"Rejected: {SUMMARY}", "Nothing was done.")
    assert notification.read_at is not None


def test_undone(owner, task):
    action = proposed(task)
    approvals.pending_action_approve(action_id=action.pk, user=owner)

    approvals.pending_action_undo(action_id=action.pk, user=owner)

    notification = notification_of(action)
    assert notification.title == f"Undone: {SUMMARY}"
    assert notification.body == "What it changed was restored."


def test_expired_by_the_sweep(api, task):
    action = proposed(task)

    with time_machine.travel(timezone.now() + dt.timedelta(minutes=31)):
        assert approvals.pending_actions_expire() == 1

    notification = notification_of(action)
    assert notification.title == f"Expired: {SUMMARY}"
    assert "nothing was done" in notification.body
    assert notification.read_at is not None
    assert unread(api) == 0


def test_expired_when_approved_too_late(owner, task):
    action = proposed(task)

    later = timezone.now() + dt.timedelta(minutes=31)
    with time_machine.travel(later), pytest.raises(Conflict, match="expired"):
        approvals.pending_action_approve(action_id=action.pk, user=owner)

    assert notification_of(action).title == f"Expired: {SUMMARY}"


def test_a_refused_decision_leaves_the_notification_as_it_was(owner, task):
    action = proposed(task)
    approvals.pending_action_reject(action_id=action.pk, user=owner)
    before = notification_of(action)

    with pytest.raises(Conflict, match="already decided"):
        approvals.pending_action_approve(action_id=action.pk, user=owner)

    after = notification_of(action)
    assert (after.title, after.read_at) == (before.title, before.read_at)


def test_a_notification_is_rewritten_only_by_its_source(db):
    mine = notify.notification_send(title="Waiting for your approval: x", source="approval:1")
    other = notify.notification_send(title="Waiting for your approval: y", source="approval:11")

    notify.notification_update_by_source(source="approval:1", title="Rejected: x", body="")

    mine.refresh_from_db()
    other.refresh_from_db()
    assert (mine.title, mine.read_at is not None) == ("Rejected: x", True)
    assert (other.title, other.read_at) == ("Waiting for your approval: y", None)
    assert notify.notification_update_by_source(source="approval:99", title="t") == []


# --- open pages --------------------------------------------------------------------------------


async def heard(act: Callable[[], Any]) -> list[dict[str, Any]]:
    """What a member of every open page's group receives while ``act`` runs (in a thread, as a
    request would, its transaction committed)."""
    layer = get_channel_layer()
    channel = await layer.new_channel()
    await layer.group_add(notify.NOTIFICATIONS_GROUP, channel)

    def run() -> None:
        try:
            act()
        finally:
            connection.close()

    try:
        await sync_to_async(run)()
        messages = []
        while True:  # what arrived, until nothing more comes for a moment
            try:
                messages.append(await asyncio.wait_for(layer.receive(channel), QUIET_SECONDS))
            except TimeoutError:
                return messages
    finally:
        await layer.group_discard(notify.NOTIFICATIONS_GROUP, channel)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("decide", ["approve", "reject"])
async def test_a_decision_reaches_open_pages_as_an_update_and_a_sync(owner, decide):
    task = await sync_to_async(services.task_create)(title="Call the bank")
    action = await sync_to_async(proposed)(task)
    decider = getattr(approvals, f"pending_action_{decide}")

    messages = await heard(lambda: decider(action_id=action.pk, user=owner))

    word = {"approve": "Approved and done", "reject": "Rejected"}[decide]
    status = {"approve": "committed", "reject": "rejected"}[decide]
    updated = [m for m in messages if m["type"] == "notification.updated"]
    assert [(n["notification"]["source"], n["notification"]["title"]) for n in updated] == [
        (f"approval:{action.pk}", f"{word}: {SUMMARY}")
    ]
    assert updated[0]["notification"]["read_at"] is not None
    assert [m["sync"] for m in messages if m["type"] == "page.sync"] == [
        {"what": "approval", "action_id": action.pk, "status": status, "conversation_id": None}
    ]
    assert not [m for m in messages if m["type"] == "notification.created"]


@pytest.mark.django_db(transaction=True)
async def test_an_open_page_receives_the_rewritten_notification_in_place_of_the_old(owner):
    client = Client()
    await sync_to_async(client.force_login)(owner)
    page = socket(client.cookies["sessionid"].value)
    connected, _ = await page.connect()
    assert connected
    try:
        task = await sync_to_async(services.task_create)(title="Call the bank")
        action = await sync_to_async(proposed)(task)
        created = await page.receive_json_from(timeout=HANG_SECONDS)
        assert created["type"] == "notification" and "updated" not in created
        assert (await page.receive_json_from(timeout=HANG_SECONDS))["type"] == "sync"

        await sync_to_async(approvals.pending_action_reject)(action_id=action.pk, user=owner)

        updated = await page.receive_json_from(timeout=HANG_SECONDS)
        assert updated["type"] == "notification" and updated["updated"] is True
        assert updated["notification"]["id"] == created["notification"]["id"]
        assert updated["notification"]["title"] == f"Rejected: {SUMMARY}"
        sync = await page.receive_json_from(timeout=HANG_SECONDS)
        assert (sync["type"], sync["what"], sync["status"]) == ("sync", "approval", "rejected")
        assert await page.receive_nothing(timeout=0.2)
    finally:
        await page.disconnect()
