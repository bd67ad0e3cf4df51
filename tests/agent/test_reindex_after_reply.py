"""The index's pass after a reply (agent/runner/reindex.py): replies that end together share a
pass, and each still returns only once a pass that began after it has indexed its messages."""

from __future__ import annotations

import asyncio
import threading

from asgiref.sync import async_to_sync

from agent.models import Conversation, Message
from agent.runner import reindex
from memory import services as memory_services
from memory.models import RecallEntry
from tests.agent.test_runner import TURN_DATABASE
from tests.waiting import HANG_SECONDS

pytestmark = TURN_DATABASE


def _indexed(message: Message) -> bool:
    return RecallEntry.objects.filter(kind="message", object_id=message.pk, live=True).exists()


def test_a_reply_returns_once_its_messages_are_indexed():
    memory_services.reindex_recent()  # the install's first (full) pass is done
    conversation = Conversation.objects.create(title="Garden")
    said = Message.objects.create(conversation=conversation, role="user", content="Plant tulips")

    async_to_sync(reindex.after_reply)()

    assert _indexed(said)


def test_replies_ending_while_a_pass_runs_share_the_next_one(monkeypatch):
    memory_services.reindex_recent()
    conversation = Conversation.objects.create(title="Garden")
    first = Message.objects.create(conversation=conversation, role="user", content="Tulips")
    started, release = threading.Event(), threading.Event()
    passes: list[list[int]] = []  # the messages indexed when each pass began
    real_pass = memory_services.reindex_after_reply

    def held_pass() -> object:
        passes.append(list(Message.objects.values_list("pk", flat=True)))
        started.set()
        assert release.wait(HANG_SECONDS)
        return real_pass()

    monkeypatch.setattr(memory_services, "reindex_after_reply", held_pass)
    later: list[Message] = []

    async def replies() -> None:
        running = asyncio.create_task(reindex.after_reply())
        await asyncio.to_thread(started.wait, HANG_SECONDS)
        # Five more replies end while the first pass runs (their messages are saved after it
        # began): none of them may return on the first pass.
        for n in range(5):
            later.append(
                await asyncio.to_thread(
                    Message.objects.create,
                    conversation=conversation,
                    role="assistant",
                    content=f"Reply {n}",
                )
            )
        waiting = [asyncio.create_task(reindex.after_reply()) for _ in range(5)]
        await asyncio.sleep(0)
        assert not any(task.done() for task in waiting)
        release.set()
        await asyncio.gather(running, *waiting)

    async_to_sync(replies)()

    assert len(passes) == 2, passes  # one per reply would be six
    assert first.pk in passes[0] and all(m.pk in passes[1] for m in later)
    assert all(_indexed(message) for message in [first, *later])


def test_a_failed_pass_is_raised_to_every_reply_that_waited_for_it(monkeypatch):
    def broken_pass() -> object:
        raise RuntimeError("index unavailable")

    monkeypatch.setattr(memory_services, "reindex_after_reply", broken_pass)

    async def two() -> list[object]:
        return await asyncio.gather(
            reindex.after_reply(), reindex.after_reply(), return_exceptions=True
        )

    outcomes = async_to_sync(two)()

    assert [str(outcome) for outcome in outcomes] == ["index unavailable"] * 2
