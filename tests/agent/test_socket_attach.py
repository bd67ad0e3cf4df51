"""The chat socket's attach frame through the real ASGI stack: a second socket joins a running
reply (a snapshot of the text so far, then the rest), one that comes back with the id of the
last event it saw gets only what came after, and a finished or unknown conversation is answered
at once."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from asgiref.sync import async_to_sync

from agent.live.turns import live_turn
from agent.models import Message
from tests.agent.fake_openai import Gate, chunk, events, text
from tests.agent.test_consumer import communicator, receive_until_done, until
from tests.agent.test_runner import use_fake
from tests.waiting import HANG_SECONDS

pytestmark = pytest.mark.django_db(transaction=True)


def gated_reply(gate: Gate) -> Any:
    return events(
        chunk({"content": "Before"}), chunk({"content": " the gate"}), gate, chunk({"content": "."})
    )


def test_a_second_socket_attaches_mid_reply_and_a_returning_one_misses_nothing(
    session_cookie, fake_openai
):
    use_fake(fake_openai)
    gate = Gate()
    fake_openai.script(gated_reply(gate))

    async def scenario() -> tuple[list[dict], list[dict], list[dict]]:
        first = communicator(session_cookie)
        await first.connect()
        await first.send_json_to({"type": "send", "text": "wait for it"})
        sent = [await first.receive_json_from(timeout=HANG_SECONDS) for _ in range(4)]
        conversation_id = sent[0]["conversation_id"]
        await first.disconnect()  # the page goes; the turn stays

        second = communicator(session_cookie)
        await second.connect()
        await second.send_json_to({"type": "attach", "conversation_id": conversation_id})
        snapshot = await second.receive_json_from(timeout=HANG_SECONDS)

        third = communicator(session_cookie)
        await third.connect()
        await third.send_json_to(
            {"type": "attach", "conversation_id": conversation_id, "last_event_id": sent[2]["id"]}
        )
        resumed = [await third.receive_json_from(timeout=HANG_SECONDS)]
        gate.opened.set()
        rest = await receive_until_done(second)
        resumed += await receive_until_done(third)
        for socket in (second, third):
            await socket.disconnect()
        return sent, [snapshot, *rest], resumed

    sent, attached, resumed = async_to_sync(scenario)()

    assert [e["type"] for e in sent] == ["title", "start", "text", "text"]
    snapshot = attached[0]
    assert snapshot["type"] == "snapshot"
    assert (snapshot["status"], snapshot["text"]) == ("streaming", "Before the gate")
    assert snapshot["id"] == sent[-1]["id"]  # it covers everything sent so far
    assert [e["type"] for e in attached[1:]] == ["text", "done"]
    assert attached[1]["delta"] == "."
    # From the id of the first text on: the second text, then the rest, nothing twice.
    assert [e["id"] for e in resumed] == [sent[3]["id"], attached[1]["id"], attached[2]["id"]]
    reply = Message.objects.get(role="assistant")
    assert (reply.status, reply.content) == ("complete", "Before the gate.")


def test_attach_to_a_finished_or_unknown_conversation_answers_at_once(session_cookie, fake_openai):
    use_fake(fake_openai)
    fake_openai.script(text("All done."))

    async def scenario() -> tuple[list[dict], dict, dict, dict]:
        ws = communicator(session_cookie)
        await ws.connect()
        await ws.send_json_to({"type": "send", "text": "hello"})
        sent = await receive_until_done(ws)
        conversation_id = sent[0]["conversation_id"]
        await until(lambda: not Message.objects.filter(status="streaming").exists())
        # The turn's work after the reply (indexing it) keeps it in this process a moment
        # longer, where an attach reads its buffer: both attaches here are to read the
        # finished conversation from the database.
        deadline = asyncio.get_running_loop().time() + HANG_SECONDS
        while live_turn(conversation_id) is not None:
            assert asyncio.get_running_loop().time() < deadline, "waited too long"
            await asyncio.sleep(0.05)
        await ws.send_json_to({"type": "attach", "conversation_id": conversation_id})
        state = await ws.receive_json_from(timeout=HANG_SECONDS)
        await ws.send_json_to(
            {"type": "attach", "conversation_id": conversation_id, "last_event_id": "not-an-id"}
        )
        again = await ws.receive_json_from(timeout=HANG_SECONDS)
        await ws.send_json_to({"type": "attach", "conversation_id": 999_999})
        missing = await ws.receive_json_from(timeout=HANG_SECONDS)
        await ws.disconnect()
        return sent, state, again, missing

    sent, state, again, missing = async_to_sync(scenario)()

    assert state["type"] == "snapshot"
    assert (state["status"], state["text"], state["message_id"]) == (
        "complete",
        "All done.",
        sent[1]["message_id"],
    )
    assert state["html"].startswith("<p>All done.")
    assert again == state  # an id that is not one of ours is no id
    assert (missing["type"], missing["code"], missing["conversation_id"]) == (
        "error",
        "NOT_FOUND",
        999_999,
    )
