"""A proposal waiting for the owner is announced like any notification: in the list, live on open
pages and by Web Push, with the summary only (never the preview's content)."""

from __future__ import annotations

import asyncio
import json

import pytest
from asgiref.sync import sync_to_async
from django.test import Client

from approvals.models import PendingAction
from talorys.notifications.models import Notification, PushDelivery
from talorys.workspace import services
from tests.agent.fake_openai import text, tool_calls
from tests.agent.test_runner import TURN_DATABASE, turn, use_fake
from tests.notifications.servers import browser, push_service  # noqa: F401 (fixtures)
from tests.notifications.test_live_notifications import socket
from tests.waiting import HANG_SECONDS

pytestmark = TURN_DATABASE  # a turn's trips see committed rows only

SECRET = "door code 4711"


def propose_a_delete(fake_openai, task_id: int) -> list[dict]:
    use_fake(fake_openai)
    fake_openai.script(
        tool_calls(("delete_task", json.dumps({"task_id": task_id}))),
        text("I asked for your approval to delete it."),
    )
    return turn(text="Delete the old errand")


def test_a_proposed_delete_sends_one_approval_notification_and_a_push(
    api,
    fake_openai,
    push_service,  # noqa: F811
    browser,  # noqa: F811
    eager,
    django_capture_on_commit_callbacks,
):
    subscribed = api.post("/api/push/subscriptions", browser.subscription(push_service.endpoint()))
    assert subscribed.status_code == 201, subscribed.content
    task = services.task_create(title="Old errand", details=SECRET)

    with django_capture_on_commit_callbacks(execute=True):
        propose_a_delete(fake_openai, task.pk)

    action = PendingAction.objects.get(status="pending")
    notification = Notification.objects.get()
    assert notification.kind == "approval"
    assert notification.title == "Waiting for your approval: Delete the task “Old errand”"
    assert notification.source == f"approval:{action.pk}"
    assert action.proposed_by == "the chat"
    assert notification.body.startswith("Proposed by the chat. Approve or reject it")
    assert SECRET not in notification.title + notification.body
    listed = api.get("/api/notifications").json()["items"]
    assert [(n["id"], n["kind"]) for n in listed] == [(notification.pk, "approval")]
    # One push to the one subscribed browser, carrying the same title and nothing more.
    delivery = PushDelivery.objects.get()
    assert (delivery.notification_id, delivery.status) == (notification.pk, "sent")
    (request,) = push_service.requests
    pushed = browser.decrypt(request.body)
    assert (pushed["title"], pushed["kind"]) == (notification.title, "approval")
    assert SECRET not in json.dumps(pushed)


def test_without_a_subscription_the_notification_is_still_made(api, fake_openai):
    task = services.task_create(title="Old errand")

    propose_a_delete(fake_openai, task.pk)

    assert list(Notification.objects.values_list("kind", flat=True)) == ["approval"]
    assert PushDelivery.objects.count() == 0


def test_a_turn_that_proposes_nothing_sends_no_approval_notification(api, fake_openai):
    use_fake(fake_openai)
    fake_openai.script(text("Hello."))

    turn(text="Hi")

    assert not Notification.objects.exists()


@pytest.mark.django_db(transaction=True)
async def test_an_open_page_is_told_live_that_an_approval_waits(owner, fake_openai):
    client = Client()
    await sync_to_async(client.force_login)(owner)
    page = socket(client.cookies["sessionid"].value)
    connected, _ = await page.connect()
    assert connected
    try:
        task = await sync_to_async(services.task_create)(title="Old errand")

        await sync_to_async(propose_a_delete)(fake_openai, task.pk)

        # The turn's own frames come too (a turn begun, a reply ended): set them aside.
        received = []
        while len([m for m in received if m.get("what") != "conversation"]) < 2:
            received.append(await page.receive_json_from(timeout=HANG_SECONDS))
        told = [m for m in received if m.get("what") != "conversation"]
        message = told[0]
        assert message["type"] == "notification"
        assert message["notification"]["kind"] == "approval"
        assert message["notification"]["title"].endswith("Delete the task “Old errand”")
        # And every card for it on the page looks at it (talorys/web/live.py).
        action = await PendingAction.objects.aget()
        assert told[1] == {
            "type": "sync",
            "what": "approval",
            "action_id": action.pk,
            "status": "pending",
            "conversation_id": action.conversation_id,
        }
        assert {m["change"] for m in received if m.get("what") == "conversation"} <= {
            "turn",
            "reply",
        }
        while not await page.receive_nothing(timeout=0.3):  # nothing else: no second notification
            extra = await page.receive_json_from(timeout=HANG_SECONDS)
            assert extra.get("what") == "conversation", extra
    finally:
        await page.disconnect()


async def _live_turn_proposing(fake_openai, task_id: int, *, followed: bool) -> None:
    """The owner's chat turn as pages run it (agent/live), followed by a page or left alone."""
    from agent.live import turn_run
    from agent.runner import begin_turn

    await sync_to_async(use_fake)(fake_openai)
    fake_openai.script(
        tool_calls(("delete_task", json.dumps({"task_id": task_id}))),
        text("I asked for your approval to delete it."),
    )
    start = await begin_turn(text="Delete the old errand")
    ended = asyncio.Event()

    async def after_end(_turn) -> None:
        ended.set()

    live = turn_run(start, after_end=after_end)
    if followed:  # a page attached from the start, as the chat's socket does
        async for _event in live.follow((start.assistant_message_id, 0)):
            pass
    await asyncio.wait_for(ended.wait(), HANG_SECONDS)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("followed", [True, False], ids=["watched", "left alone"])
async def test_a_proposal_is_announced_only_when_no_page_of_the_owner_follows_it(
    owner, fake_openai, followed
):
    from talorys.notifications.models import Channel, ChannelDelivery, PushSubscription

    await PushSubscription.objects.acreate(endpoint="https://push.example/1", p256dh="k", auth="a")
    await Channel.objects.acreate(name="Phone", url="json://127.0.0.1:9/", kinds=["approval"])
    task = await sync_to_async(services.task_create)(title="Old errand")

    await _live_turn_proposing(fake_openai, task.pk, followed=followed)

    assert await PendingAction.objects.filter(status="pending").acount() == 1
    notification = await Notification.objects.aget()
    assert notification.title == "Waiting for your approval: Delete the task “Old errand”"
    # Watched: only recorded (read, nothing sent). Left alone: unread, pushed, sent to channels.
    assert (notification.read_at is not None) is followed
    assert await PushDelivery.objects.acount() == (0 if followed else 1)
    assert await ChannelDelivery.objects.acount() == (0 if followed else 1)
