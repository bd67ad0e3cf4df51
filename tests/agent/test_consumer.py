"""The chat WebSocket through the real ASGI stack (origin check, session auth, routing).

The consumer drops stale database connections the way Channels does, which ends a test
transaction, so these tests use committed data (``transaction=True``).
"""

from __future__ import annotations

import asyncio
import datetime as dt
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.utils import timezone

from agent.live import live_turn
from agent.models import Conversation, Message
from config.asgi import application
from talorys.workspace.models import Task
from tests.agent.fake_openai import Gate, Stall, chunk, events
from tests.agent.test_runner import conversation_with, use_fake
from tests.waiting import HANG_SECONDS

pytestmark = pytest.mark.django_db(transaction=True)


def communicator(cookie: bytes = b"", origin: bytes = b"http://testserver") -> Any:
    headers = [(b"host", b"testserver"), (b"origin", origin)] + (
        [(b"cookie", cookie)] if cookie else []
    )
    return WebsocketCommunicator(application, "/ws/chat/", headers=headers)


async def receive_until_done(ws: Any) -> list[dict[str, Any]]:
    received = [await ws.receive_json_from(timeout=HANG_SECONDS)]
    while received[-1]["type"] != "done":
        received.append(await ws.receive_json_from(timeout=HANG_SECONDS))
    return received


def test_anonymous_sockets_are_refused(db):
    async def scenario() -> tuple[bool, Any]:
        ws = communicator()
        connected, code = await ws.connect()
        await ws.disconnect()
        return connected, code

    assert async_to_sync(scenario)() == (False, 4401)


def test_other_origins_are_refused(session_cookie):
    async def scenario() -> bool:
        ws = communicator(session_cookie, origin=b"https://evil.example")
        connected, _ = await ws.connect()
        await ws.disconnect()
        return connected

    assert async_to_sync(scenario)() is False


def test_a_turn_over_the_socket_creates_a_task(session_cookie, fake_openai):
    use_fake(fake_openai)  # its default reply calls create_task for "add a task to ..."

    async def scenario() -> list[dict[str, Any]]:
        ws = communicator(session_cookie)
        connected, _ = await ws.connect()
        assert connected
        try:
            await ws.send_json_to({"type": "send", "text": "Add a task to water the plants"})
            return await receive_until_done(ws)
        finally:
            await ws.disconnect()

    received = async_to_sync(scenario)()

    assert [e["type"] for e in received] == ["title", "start", "tool", "text", "text", "done"]
    assert received[2]["activity"]["tool"] == "create_task"
    assert received[-1]["status"] == "complete"
    assert Task.objects.filter(title="water the plants").exists()
    reply = Message.objects.get(role="assistant")
    assert reply.status == "complete"
    assert reply.conversation_id == received[0]["conversation_id"]


@pytest.mark.parametrize(
    "frame",
    [
        "not json",
        {"type": "dance"},
        {"type": "send", "text": "hi", "model": "other"},
        {"type": "send", "text": "x" * 32_001},
        {"type": "cancel"},
        {"type": "attach"},
        {"type": "attach", "conversation_id": 1, "last_event_id": "1." + "9" * 60},
        {"type": "attach", "conversation_id": "one"},
        {"type": "send", "text": "   "},
        {"type": "send", "text": "h\x00i"},
        ["send", "hi"],
    ],
)
def test_invalid_frames_get_an_error_event_and_change_nothing(session_cookie, frame):
    async def scenario() -> dict[str, Any]:
        ws = communicator(session_cookie)
        await ws.connect()
        try:
            if isinstance(frame, str):
                await ws.send_to(text_data=frame)
            else:
                await ws.send_json_to(frame)
            return await ws.receive_json_from(timeout=HANG_SECONDS)
        finally:
            await ws.disconnect()

    event = async_to_sync(scenario)()

    assert event["type"] == "error"
    assert event["code"] == "VALIDATION"
    assert not Conversation.objects.exists()


def test_a_busy_conversation_gets_a_conflict_event(session_cookie):
    conversation = conversation_with(
        ("user", "hi"),
        turn_id="elsewhere",
        turn_lease_until=timezone.now() + dt.timedelta(seconds=30),
    )

    async def scenario() -> dict[str, Any]:
        ws = communicator(session_cookie)
        await ws.connect()
        try:
            await ws.send_json_to(
                {"type": "send", "text": "again", "conversation_id": conversation.pk}
            )
            return await ws.receive_json_from(timeout=HANG_SECONDS)
        finally:
            await ws.disconnect()

    event = async_to_sync(scenario)()

    assert event == {
        "type": "error",
        "conversation_id": conversation.pk,
        "code": "CONFLICT",
        "message": "A response is already being generated in this conversation.",
    }
    assert conversation.messages.count() == 1


def slow_reply() -> Any:
    return events(chunk({"content": "Thinking"}), Stall(10), chunk({"content": " more"}))


def test_a_cancel_frame_stops_the_turn(session_cookie, fake_openai):
    use_fake(fake_openai)
    fake_openai.script(slow_reply())

    async def scenario() -> list[dict[str, Any]]:
        ws = communicator(session_cookie)
        await ws.connect()
        try:
            await ws.send_json_to({"type": "send", "text": "think hard"})
            received = [await ws.receive_json_from(timeout=HANG_SECONDS) for _ in range(3)]
            await ws.send_json_to(
                {"type": "cancel", "conversation_id": received[0]["conversation_id"]}
            )
            received.append(await ws.receive_json_from(timeout=HANG_SECONDS))
            return received
        finally:
            await ws.disconnect()

    received = async_to_sync(scenario)()

    assert [e["type"] for e in received] == ["title", "start", "text", "done"]
    assert received[-1]["status"] == "cancelled"
    reply = Message.objects.get(role="assistant")
    assert (reply.status, reply.content) == ("cancelled", "Thinking")


def test_closing_the_socket_leaves_the_turn_to_finish(session_cookie, fake_openai):
    use_fake(fake_openai)
    fake_openai.script(
        events(chunk({"content": "Thinking"}), Stall(1.0), chunk({"content": " more"}))
    )

    async def scenario() -> list[dict[str, Any]]:
        ws = communicator(session_cookie)
        await ws.connect()
        await ws.send_json_to({"type": "send", "text": "think hard"})
        received = [await ws.receive_json_from(timeout=HANG_SECONDS) for _ in range(3)]
        await ws.disconnect()
        # The turn is the process's, not the socket's: it goes on to the end.
        await until(lambda: not Message.objects.filter(status="streaming").exists())
        return received

    received = async_to_sync(scenario)()

    assert received[-1] == {
        "type": "text",
        "id": f"{received[1]['message_id']}.3",
        "conversation_id": received[0]["conversation_id"],
        "message_id": received[1]["message_id"],
        "delta": "Thinking",
    }
    reply = Message.objects.get(role="assistant")
    assert (reply.status, reply.content) == ("complete", "Thinking more")
    assert Conversation.objects.get().turn_id == ""
    assert not fake_openai.disconnected.is_set()


def test_closing_the_socket_stops_following_a_new_conversations_turn(session_cookie, fake_openai):
    use_fake(fake_openai)
    gate = Gate()
    fake_openai.script(events(chunk({"content": "Thinking"}), gate, chunk({"content": " more"})))

    async def scenario() -> tuple[int, int]:
        ws = communicator(session_cookie)
        await ws.connect()
        await ws.send_json_to({"type": "send", "text": "think hard"})  # no conversation yet
        received = [await ws.receive_json_from(timeout=HANG_SECONDS) for _ in range(3)]
        turn = live_turn(received[0]["conversation_id"])
        assert turn is not None
        following = len(turn.followers)
        await ws.disconnect()
        left = len(turn.followers)  # the turn still runs: the gate is shut
        gate.opened.set()
        await until(lambda: not Message.objects.filter(status="streaming").exists())
        return following, left

    # Nobody follows it once the page is gone (what "Your reply is ready" counts on).
    assert async_to_sync(scenario)() == (1, 0)


async def until(condition: Any) -> None:
    """Wait, on the test's event loop, until ``condition()`` (run in a thread) holds."""
    deadline = asyncio.get_running_loop().time() + HANG_SECONDS
    while not await database_sync_to_async(condition)():
        assert asyncio.get_running_loop().time() < deadline, "waited too long"
        await asyncio.sleep(0.05)
