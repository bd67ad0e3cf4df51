"""A reply's text is saved as it streams (agent/runner/lease.py, agent/turn_saves.py), so a turn
whose process dies leaves it with what it had said; the next turn closes it as interrupted and
keeps that text. The same with real processes killed: tests/faults/test_turn_crash.py."""

from __future__ import annotations

import asyncio
import datetime as dt
import time
from typing import Any

from asgiref.sync import async_to_sync, sync_to_async
from django.utils import timezone

from agent import services, turn_saves
from agent.models import Conversation, Message
from agent.runner import run_turn
from tests.agent.fake_openai import Gate, chunk, events
from tests.agent.test_runner import TURN_DATABASE, use_fake
from tests.waiting import HANG_SECONDS

pytestmark = TURN_DATABASE


async def _saved_while_streaming(gate: Gate) -> tuple[str, list[dict[str, Any]]]:
    """The reply's content in the database once its first words streamed (the model silent
    after them), then the turn's events once the model goes on."""
    seen: list[dict[str, Any]] = []
    content = ""
    async for event in run_turn(text="tell me"):
        seen.append(event)
        if event["type"] == "text" and not gate.opened.is_set():
            reply = Message.objects.filter(pk=event["message_id"]).values_list("content", flat=True)
            deadline = time.monotonic() + HANG_SECONDS
            while content != event["delta"] and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
                content = await sync_to_async(reply.get)()
            gate.opened.set()
    return content, seen


def test_a_reply_saves_its_text_so_far_while_it_streams(fake_openai):
    use_fake(fake_openai)
    gate = Gate()
    fake_openai.script(
        events(chunk({"content": "Once upon"}), gate, chunk({"content": " a time."}))
    )
    try:
        content, seen = async_to_sync(_saved_while_streaming)(gate)
    finally:
        gate.opened.set()

    assert content == "Once upon"  # in the database while the model was still answering
    reply = Message.objects.get(pk=seen[-1]["message_id"])
    assert (reply.status, reply.content) == ("complete", "Once upon a time.")


def test_a_reply_left_streaming_is_closed_as_interrupted_with_its_saved_text():
    dead = services.turn_begin(conversation_id=None, text="first")
    turn_saves.turn_text_save(message_id=dead.assistant_message_id, content="What I had\x00 said")
    # Its process died: its lease runs out.
    Conversation.objects.filter(pk=dead.conversation_id).update(
        turn_lease_until=timezone.now() - dt.timedelta(seconds=1)
    )

    services.turn_begin(conversation_id=dead.conversation_id, text="anyone there?")

    orphan = Message.objects.get(pk=dead.assistant_message_id)
    assert (orphan.status, orphan.error_code, orphan.content) == (
        "error",
        "INTERRUPTED",
        "What I had said",  # NUL dropped: PostgreSQL refuses it
    )
    # A save that comes after the reply was closed changes nothing.
    turn_saves.turn_text_save(message_id=dead.assistant_message_id, content="late")
    assert Message.objects.get(pk=dead.assistant_message_id).content == "What I had said"
