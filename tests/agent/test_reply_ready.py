""" "Your reply is ready" (agent/live/ready.py): a long reply that ends with no page following it
notifies the owner, once, and opens the conversation; a followed, cancelled or short one does
not. In this process over the chat socket, and across two daphnes sharing Redis."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from typing import Any

import httpx
import pytest
from asgiref.sync import async_to_sync

from agent.live import run
from agent.models import Message
from talorys.notifications import push
from talorys.notifications.models import Notification, PushDelivery, PushSubscription
from tests.agent.fake_openai import Gate, chunk, events
from tests.agent.test_consumer import communicator
from tests.agent.test_live_processes import another_client, follower_present, open_when
from tests.agent.test_runner import use_fake
from tests.agent.test_sse_live import logged_in, sse_with_ids
from tests.waiting import HANG_SECONDS, wait_for

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def ready_after(settings):
    """Set how long a turn must run for a notice (0: any turn)."""

    def set_seconds(seconds: float) -> None:
        settings.TALORYS_REPLY_READY_SECONDS = seconds

    return set_seconds


@pytest.fixture
def decisions(caplog) -> Any:
    """What ready.py logs of the notices it does not send (only the followed ones say why)."""
    caplog.set_level(logging.INFO, logger="agent.live.ready")
    return caplog


FOLLOWED = "no reply-ready notice: a page follows it"


@pytest.fixture
def subscription(db) -> PushSubscription:
    """A browser's push subscription (its keys are not used: no push is sent here)."""
    return PushSubscription.objects.create(
        endpoint="https://push.example.com/browser-1", p256dh="BKey", auth="secret"
    )


def gated(fake_openai: Any) -> Gate:
    """The model says "Thinking", then nothing until the gate opens, then " done."."""
    use_fake(fake_openai)
    gate = Gate()
    fake_openai.script(events(chunk({"content": "Thinking"}), gate, chunk({"content": " done."})))
    return gate


async def turns_ended() -> None:
    """Until every turn of this process has ended, its notice sent or not (run.py's tasks)."""
    deadline = asyncio.get_running_loop().time() + HANG_SECONDS
    while run._tasks:
        assert asyncio.get_running_loop().time() < deadline, "waited too long"
        await asyncio.sleep(0.05)


async def start_and_leave(cookie: bytes) -> int:
    """A page sends a message, sees the reply begin, and closes; the conversation's id."""
    ws = communicator(cookie)
    await ws.connect()
    await ws.send_json_to({"type": "send", "text": "Plan my week"})
    received = [await ws.receive_json_from(timeout=HANG_SECONDS) for _ in range(3)]
    assert [event["type"] for event in received] == ["title", "start", "text"]
    await ws.disconnect()
    return received[0]["conversation_id"]


def notices() -> list[Notification]:
    return list(Notification.objects.filter(source__startswith="conversation:"))


def test_a_reply_that_ends_with_no_page_open_is_notified_once(
    session_cookie, fake_openai, ready_after, subscription
):
    ready_after(0)
    gate = gated(fake_openai)

    async def scenario() -> int:
        conversation_id = await start_and_leave(session_cookie)
        gate.opened.set()
        await turns_ended()
        return conversation_id

    conversation_id = async_to_sync(scenario)()

    assert Message.objects.get(role="assistant").status == "complete"
    (notice,) = notices()
    assert notice.title == "Your reply is ready: Plan my week"
    assert notice.source == f"conversation:{conversation_id}"
    assert notice.kind == "info"
    assert "Thinking" not in notice.body  # never the reply's text
    (delivery,) = PushDelivery.objects.all()
    assert (delivery.notification, delivery.subscription) == (notice, subscription)
    # Clicked, its push opens the conversation.
    assert json.loads(push._payload(notice))["url"] == f"/c/{conversation_id}/"


@pytest.mark.parametrize("page", ["the same page", "a page that came back"])
def test_a_reply_followed_to_its_end_is_not_notified(
    session_cookie, fake_openai, ready_after, decisions, page
):
    ready_after(0)
    gate = gated(fake_openai)

    async def scenario() -> list[dict[str, Any]]:
        ws = communicator(session_cookie)
        await ws.connect()
        await ws.send_json_to({"type": "send", "text": "Plan my week"})
        received = [await ws.receive_json_from(timeout=HANG_SECONDS) for _ in range(3)]
        if page == "a page that came back":
            await ws.disconnect()
            ws = communicator(session_cookie)
            await ws.connect()
            frame = {"type": "attach", "conversation_id": received[0]["conversation_id"]}
            await ws.send_json_to(frame | {"last_event_id": received[-1]["id"]})
        gate.opened.set()
        received.append(await ws.receive_json_from(timeout=HANG_SECONDS))
        while received[-1]["type"] != "done":
            received.append(await ws.receive_json_from(timeout=HANG_SECONDS))
        await turns_ended()
        await ws.disconnect()
        return received

    received = async_to_sync(scenario)()

    assert [event["type"] for event in received][-2:] == ["text", "done"]
    assert Message.objects.get(role="assistant").status == "complete"
    assert notices() == []
    assert FOLLOWED in decisions.text


def test_a_cancelled_reply_is_not_notified(session_cookie, fake_openai, ready_after, decisions):
    ready_after(0)
    gate = gated(fake_openai)

    async def scenario() -> None:
        conversation_id = await start_and_leave(session_cookie)
        # Another page cancels it, without following it.
        ws = communicator(session_cookie)
        await ws.connect()
        await ws.send_json_to({"type": "cancel", "conversation_id": conversation_id})
        try:
            await turns_ended()
        finally:
            gate.opened.set()
            await ws.disconnect()

    async_to_sync(scenario)()

    assert Message.objects.get(role="assistant").status == "cancelled"
    assert notices() == []
    assert FOLLOWED not in decisions.text  # for being cancelled, not for a page left behind


def test_a_reply_shorter_than_the_threshold_is_not_notified(
    session_cookie, fake_openai, ready_after, decisions
):
    ready_after(60)
    gate = gated(fake_openai)

    async def scenario() -> None:
        await start_and_leave(session_cookie)
        gate.opened.set()
        await turns_ended()

    async_to_sync(scenario)()

    assert Message.objects.get(role="assistant").status == "complete"
    assert notices() == []
    assert FOLLOWED not in decisions.text  # for being short, not for a page left behind


# --- two web processes -----------------------------------------------------------------------


@pytest.fixture
def live_server_env(redis_live_env) -> dict[str, str]:
    return redis_live_env | {"TALORYS_REPLY_READY_SECONDS": "0"}


def start_and_leave_over_http(url: str) -> tuple[httpx.Client, int, int]:
    """A page (the proxy's next connection) starts a turn, sees it begin, and hangs up: the
    client (logged in), the conversation and the reply's ids."""
    starter = logged_in(url)
    with starter.stream("POST", "/api/chat", json={"text": "Plan my week"}) as response:
        received = []
        for item in sse_with_ids(response):
            received.append(item)
            if item[1] == "text":
                break
    return starter, received[0][2]["conversation_id"], received[1][2]["message_id"]


@pytest.mark.postgres
@pytest.mark.redis
def test_a_page_following_in_the_other_process_means_no_notice(
    processes, fake_openai, redis_url_for_tests
):
    gate = gated(fake_openai)
    starter, conversation_id, message_id = start_and_leave_over_http(processes.url)  # daphne 0
    # The model goes on once the page that came back (on the other daphne) follows the turn:
    # its response's headers come with the first event after its Last-Event-ID.
    opener = threading.Thread(
        target=open_when, args=(gate, lambda: follower_present(redis_url_for_tests, message_id))
    )
    opener.start()
    try:
        with (
            another_client(starter, processes.url) as follower,  # daphne 1
            follower.stream(
                "GET",
                f"/api/conversations/{conversation_id}/stream",
                headers={"Last-Event-ID": f"{message_id}.3"},
            ) as response,
        ):
            rest = list(sse_with_ids(response))
    finally:
        gate.opened.set()
        opener.join()
        starter.close()

    assert [name for _, name, _ in rest] == ["text", "done"]
    decided = f"{FOLLOWED} in another process"
    wait_for(lambda: decided in processes.servers[0].log.read_text(), "daphne 0's decision")
    assert notices() == []
    assert processes.answered(0, "POST /api/auth/login")
    assert processes.answered(1, f"GET /api/conversations/{conversation_id}/stream")


@pytest.mark.postgres
@pytest.mark.redis
def test_a_page_gone_from_both_processes_means_a_notice(processes, fake_openai, subscription):
    gate = gated(fake_openai)
    starter, conversation_id, _ = start_and_leave_over_http(processes.url)
    gate.opened.set()
    starter.close()

    wait_for(lambda: notices(), "the reply-ready notice")
    (notice,) = notices()
    assert (notice.title, notice.source) == (
        "Your reply is ready: Plan my week",
        f"conversation:{conversation_id}",
    )
    assert PushDelivery.objects.filter(notification=notice, subscription=subscription).exists()
