"""One turn per conversation across processes, on PostgreSQL.

Each "process" is a thread with its own event loop and its own database connection, as two
daphne processes would have.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from django.db import connection, connections

from agent import services
from agent.models import Message
from agent.runner import begin_turn, stream_turn
from talorys.lib.errors import Conflict
from tests.agent.fake_openai import Stall, chunk, events, text
from tests.agent.test_runner import conversation_with, use_fake
from tests.waiting import HANG_SECONDS

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]


def in_own_process(work: Callable[..., Any], *args: Any) -> Callable[[], Any]:
    """Run ``work`` (async) on a loop of its own; its ORM calls use this thread's connection."""

    def run() -> Any:
        try:
            return async_to_sync(work)(*args)
        finally:
            connections.close_all()

    return run


def _backend_pid() -> int:
    connection.ensure_connection()
    return connection.connection.info.backend_pid


def test_two_processes_racing_for_a_conversation_get_one_turn(needs_postgres, fake_openai):
    use_fake(fake_openai)
    conversation = conversation_with(("user", "hi"), ("assistant", "Hello!"))
    rounds = 5
    # The winner streams for a moment, so a loser that came late still finds it busy.
    fake_openai.script(*[events(chunk({"content": "ok"}), Stall(0.3)) for _ in range(rounds)])

    async def contender(barrier: threading.Barrier, pids: list[int]) -> str:
        pids.append(await sync_to_async(_backend_pid)())
        await sync_to_async(barrier.wait)()
        try:
            start = await begin_turn(conversation_id=conversation.pk, text="go")
        except Conflict:
            return "conflict"
        return [event async for event in stream_turn(start)][-1]["status"]

    for _ in range(rounds):
        barrier = threading.Barrier(2)
        pids: list[int] = []
        with ThreadPoolExecutor(2) as pool:
            outcomes = [pool.submit(in_own_process(contender, barrier, pids)) for _ in range(2)]
            results = sorted(future.result(timeout=20) for future in outcomes)

        assert len(set(pids)) == 2  # two connections, as two processes would have
        assert results == ["complete", "conflict"]

    # One owner message and one reply per round, nothing from the refused turns.
    assert conversation.messages.filter(role="user", content="go").count() == rounds
    assert conversation.messages.filter(role="assistant", status="complete").count() == 1 + rounds


def test_cancel_from_another_process_stops_the_turn(needs_postgres, fake_openai):
    use_fake(fake_openai)
    fake_openai.script(events(chunk({"content": "Let me"}), Stall(10), chunk({"content": "..."})))
    streaming = threading.Event()
    conversation_ids: list[int] = []

    async def turn() -> list[dict[str, Any]]:
        start = await begin_turn(text="write an essay")
        conversation_ids.append(start.conversation_id)
        seen = []
        async for event in stream_turn(start):
            seen.append(event)
            if event["type"] == "text":
                streaming.set()
        return seen

    with ThreadPoolExecutor(1) as pool:
        running = pool.submit(in_own_process(turn))
        assert streaming.wait(HANG_SECONDS)
        began = time.monotonic()
        # This thread is the other process: its own connection, only the row in common.
        assert services.turn_cancel(conversation_id=conversation_ids[0]) is True
        seen = running.result(timeout=10)

    assert time.monotonic() - began < 2
    assert seen[-1]["status"] == "cancelled"
    reply = Message.objects.get(role="assistant")
    assert (reply.status, reply.content) == ("cancelled", "Let me")


def test_after_a_turn_ends_another_process_may_start_one(needs_postgres, fake_openai):
    use_fake(fake_openai)
    conversation = conversation_with(("user", "hi"))
    fake_openai.script(text("one"), text("two"))

    async def one_turn() -> str:
        start = await begin_turn(conversation_id=conversation.pk, text="next")
        return [event async for event in stream_turn(start)][-1]["status"]

    with ThreadPoolExecutor(1) as pool:
        assert pool.submit(in_own_process(one_turn)).result(timeout=10) == "complete"
    with ThreadPoolExecutor(1) as pool:
        assert pool.submit(in_own_process(one_turn)).result(timeout=10) == "complete"
