"""A turn run by one web process, followed and cancelled through another (agent/live/mirror.py).

Two daphnes on the test database and the test Redis, behind one port (tests/round_robin.py): a
client's first connection lands on daphne 0, the next client's on daphne 1. Each test checks in
both daphnes' access logs that the request it meant for one was answered there.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
import redis

from agent.models import Message
from tests.agent.fake_openai import Gate, chunk, events
from tests.agent.test_runner import use_fake
from tests.agent.test_sse_live import logged_in, sse_with_ids
from tests.waiting import wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres, pytest.mark.redis]

Received = tuple[str, str, dict[str, Any]]  # (id, event name, data)


@pytest.fixture
def live_server_env(redis_live_env) -> dict[str, str]:
    return redis_live_env


def gated_reply(before: int, after: int) -> tuple[Gate, Any, str]:
    """A reply of ``before`` words, then silence until the gate opens, then ``after`` words;
    and its whole text."""
    gate = Gate()
    words = [f"w{n} " for n in range(before + after)]
    parts: list[Any] = [chunk({"content": word}) for word in words[:before]]
    parts += [gate] + [chunk({"content": word}) for word in words[before:]]
    return gate, events(*parts), "".join(words)


def another_client(client: httpx.Client, url: str) -> httpx.Client:
    """The same owner's session, on a new connection (so, through the proxy, the next daphne)."""
    return httpx.Client(
        base_url=url,
        timeout=10,
        cookies=client.cookies,
        headers={"X-CSRFToken": client.headers["X-CSRFToken"]},
    )


def read_until(received: Iterator[Received], delta: str) -> list[Received]:
    seen = []
    for item in received:
        seen.append(item)
        if item[1] == "text" and item[2]["delta"] == delta:
            return seen
    raise AssertionError(f"the stream ended before {delta!r}: {seen}")


def seq(event_id: str) -> int:
    return int(event_id.rsplit(".", 1)[1])


def follower_present(redis_url: str, message_id: int) -> bool:
    """A follower in another process has said it is there (mirror.remote_follow), so it is past
    its backlog and reads the live stream."""
    return redis.Redis.from_url(redis_url).zcard(f"talorys:turn:{message_id}:followers") > 0


def open_when(gate: Gate, condition: Callable[[], bool]) -> None:
    try:
        wait_for(condition, "the follower")
    finally:
        gate.opened.set()


def test_a_turn_is_attached_from_the_other_process_with_a_snapshot(
    processes, fake_openai, redis_url_for_tests
):
    use_fake(fake_openai)
    gate, reply, whole = gated_reply(3, 6)
    fake_openai.script(reply)

    starter = logged_in(processes.url)  # the first connection: daphne 0
    with starter.stream("POST", "/api/chat", json={"text": "count"}) as response:
        starting = sse_with_ids(response)
        first = read_until(starting, "w2 ")
        conversation_id = first[0][2]["conversation_id"]
        follower = another_client(starter, processes.url)  # daphne 1
        with follower.stream("GET", f"/api/conversations/{conversation_id}/stream") as r:
            assert r.status_code == 200
            attached = sse_with_ids(r)
            snapshot_id, name, snapshot = next(attached)
            gate.opened.set()
            rest = list(attached)
        follower.close()
        first += list(starting)  # the starting page followed it to the end too
    starter.close()

    assert name == "snapshot"
    assert snapshot["status"] == "streaming"
    names = [name for _, name, _ in rest]
    assert names[-1] == "done" and rest[-1][2]["status"] == "complete"
    # Followed live from the snapshot on: every event after it, once, in order.
    assert [seq(event_id) for event_id, _, _ in rest] == list(
        range(seq(snapshot_id) + 1, seq(snapshot_id) + 1 + len(rest))
    )
    text = snapshot["text"] + "".join(data["delta"] for _, name, data in rest if name == "text")
    saved = Message.objects.get(role="assistant")
    assert text == saved.content == whole
    assert snapshot["message_id"] == saved.pk
    assert [seq(event_id) for event_id, _, _ in first] == list(range(1, len(first) + 1))
    assert first[-1] == (rest[-1][0], "done", rest[-1][2])  # the same events, the same ids
    assert processes.answered(0, "POST /api/chat")
    assert processes.answered(1, f"GET /api/conversations/{conversation_id}/stream")
    assert "POST /api/chat" not in processes.requests(1)


def test_attach_from_the_other_process_after_last_event_id_misses_and_repeats_nothing(
    processes, fake_openai, redis_url_for_tests
):
    use_fake(fake_openai)
    gate, reply, whole = gated_reply(3, 40)
    fake_openai.script(reply)

    starter = logged_in(processes.url)
    with starter.stream("POST", "/api/chat", json={"text": "count"}) as response:
        first = read_until(sse_with_ids(response), "w2 ")
    # The page went away after w2: it comes back, on the other process, with its last event id.
    conversation_id, message_id = first[0][2]["conversation_id"], first[1][2]["message_id"]
    # Nothing is sent after w2 until the gate opens, not even the response's headers (daphne
    # writes them with the first event): the gate opens once the follower reads the live stream.
    opener = threading.Thread(
        target=open_when, args=(gate, lambda: follower_present(redis_url_for_tests, message_id))
    )
    opener.start()
    try:
        with (
            another_client(starter, processes.url) as follower,
            follower.stream(
                "GET",
                f"/api/conversations/{conversation_id}/stream",
                headers={"Last-Event-ID": first[-1][0]},
            ) as r,
        ):
            assert r.status_code == 200
            rest = list(sse_with_ids(r))
    finally:
        gate.opened.set()
        opener.join()
    starter.close()

    names = [name for _, name, _ in rest]
    assert "snapshot" not in names
    assert names[-1] == "done"
    ids = [event_id for event_id, _, _ in first + rest]
    assert [seq(event_id) for event_id in ids] == list(range(1, len(ids) + 1))
    text = "".join(data["delta"] for _, name, data in first + rest if name == "text")
    assert text == Message.objects.get(role="assistant").content == whole
    # One connection for the starting page (its login and its POST /api/chat, which it hung up
    # on: daphne logs no line for that one) and one for the page that came back.
    assert [route.backend for route in processes.proxy.routes] == [0, 1]
    assert processes.answered(0, "POST /api/auth/login")
    assert processes.answered(1, f"GET /api/conversations/{conversation_id}/stream")


def test_a_cancel_sent_to_the_other_process_stops_the_turn(processes, fake_openai):
    use_fake(fake_openai)
    gate, reply, _ = gated_reply(2, 5)
    fake_openai.script(reply)

    starter = logged_in(processes.url)
    try:
        with starter.stream("POST", "/api/chat", json={"text": "think"}) as response:
            received = sse_with_ids(response)
            first = read_until(received, "w1 ")
            conversation_id = first[0][2]["conversation_id"]
            with another_client(starter, processes.url) as canceller:
                answer = canceller.post(
                    "/api/chat/cancel", json={"conversation_id": conversation_id}
                )
            rest = list(received)
    finally:
        gate.opened.set()  # lets the fake model's thread go, whatever happened
    starter.close()

    assert answer.status_code == 200, answer.text
    assert answer.json() == {"cancelled": True}
    assert [name for _, name, _ in rest] == ["done"]
    assert rest[-1][2]["status"] == "cancelled"
    reply_row = Message.objects.get(role="assistant")
    assert (reply_row.status, reply_row.content) == ("cancelled", "w0 w1 ")
    assert fake_openai.disconnected.is_set()  # the model's stream was hung up on, not finished
    assert processes.answered(0, "POST /api/chat")
    assert processes.answered(1, "POST /api/chat/cancel")
    assert "POST /api/chat/cancel" not in processes.requests(0)
