"""POST /api/chat against a live daphne process, on the test database (PostgreSQL)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from agent.models import Message
from talorys.workspace.models import Task
from tests.agent.fake_openai import Stall, chunk, events, tool_calls
from tests.agent.test_runner import use_fake
from tests.conftest import OWNER_PASSWORD
from tests.waiting import wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]


def logged_in(url: str) -> httpx.Client:
    client = httpx.Client(base_url=url, timeout=10)
    response = client.post(
        "/api/auth/login", json={"username": "owner", "password": OWNER_PASSWORD}
    )
    assert response.status_code == 200, response.text
    client.headers["X-CSRFToken"] = response.json()["csrf_token"]
    return client


def sse_events(response: httpx.Response) -> Iterator[tuple[float, str, dict[str, Any]]]:
    """(arrival time, event name, data) as each event arrives."""
    name = ""
    for line in response.iter_lines():
        if line.startswith("event: "):
            name = line.removeprefix("event: ")
        elif line.startswith("data: "):
            yield time.monotonic(), name, json.loads(line.removeprefix("data: "))


def test_a_turn_streams_over_sse_from_a_live_server(live_server_url, fake_openai):
    use_fake(fake_openai)
    fake_openai.script(
        tool_calls(("create_task", '{"title": "Book the dentist"}')),
        events(chunk({"content": "Added"}), Stall(1.0), chunk({"content": " it."})),
    )

    client = logged_in(live_server_url)
    with client.stream("POST", "/api/chat", json={"text": "Add a task to book the dentist"}) as r:
        assert r.status_code == 200
        assert r.headers["content-type"] == "text/event-stream"
        received = list(sse_events(r))
    client.close()

    assert [name for _, name, _ in received] == ["title", "start", "tool", "text", "text", "done"]
    assert received[-1][2]["status"] == "complete"
    # Streamed, not buffered: the first words arrived while the model was still silent.
    first_text_at = received[3][0]
    assert received[-1][0] - first_text_at > 0.7
    assert Task.objects.filter(title="Book the dentist").exists()
    reply = Message.objects.get(role="assistant")
    assert (reply.status, reply.content) == ("complete", "Added it.")


def test_a_client_that_hangs_up_leaves_the_reply_to_complete(live_server_url, fake_openai):
    use_fake(fake_openai)
    fake_openai.script(events(chunk({"content": "Thinking"}), Stall(1.5), chunk({"content": "."})))

    client = logged_in(live_server_url)
    with client.stream("POST", "/api/chat", json={"text": "think"}) as response:
        for _, name, _ in sse_events(response):
            if name == "text":
                break
    client.close()  # the connection goes away mid-stream

    wait_for(
        lambda: not Message.objects.filter(role="assistant", status="streaming").exists(),
        "the turn to end on its own",
    )
    reply = Message.objects.get(role="assistant")
    assert (reply.status, reply.content) == ("complete", "Thinking.")
    assert reply.conversation.turn_id == ""
    assert not fake_openai.disconnected.is_set()


def sse_with_ids(response: httpx.Response) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(id, event name, data) as each event arrives."""
    event_id = name = ""
    for line in response.iter_lines():
        if line.startswith("id: "):
            event_id = line.removeprefix("id: ")
        elif line.startswith("event: "):
            name = line.removeprefix("event: ")
        elif line.startswith("data: "):
            yield event_id, name, json.loads(line.removeprefix("data: "))


def test_attach_with_last_event_id_misses_nothing_and_repeats_nothing(live_server_url, fake_openai):
    use_fake(fake_openai)
    words = [f"w{n} " for n in range(12)]
    fake_openai.script(
        events(*[part for word in words for part in (chunk({"content": word}), Stall(0.15))])
    )

    client = logged_in(live_server_url)
    first: list[tuple[str, str, dict[str, Any]]] = []
    with client.stream("POST", "/api/chat", json={"text": "count"}) as response:
        for received in sse_with_ids(response):
            first.append(received)
            if received[1] == "text" and received[2]["delta"] == "w2 ":
                break
    conversation_id = first[0][2]["conversation_id"]
    last_id = first[-1][0]
    # Every event carries an id, in order.
    assert all(event_id for event_id, _, _ in first)
    with client.stream(
        "GET",
        f"/api/conversations/{conversation_id}/stream",
        headers={"Last-Event-ID": last_id},
    ) as response:
        assert response.status_code == 200
        rest = list(sse_with_ids(response))
    client.close()

    names = [name for _, name, _ in rest]
    assert "snapshot" not in names  # the buffer still held them: no snapshot was needed
    assert names[-1] == "done" or (names[-2] == "done" and names[-1] == "title")
    ids = [event_id for event_id, _, _ in first + rest]
    assert len(ids) == len(set(ids))
    seqs = [int(event_id.rsplit(".", 1)[1]) for event_id in ids]
    assert seqs == list(range(1, len(seqs) + 1))  # none missed
    text = "".join(data["delta"] for _, name, data in first + rest if name == "text")
    assert text == "".join(words)
    assert Message.objects.get(role="assistant").content == "".join(words)


def test_attach_to_a_finished_conversation_answers_its_state(live_server_url, fake_openai):
    use_fake(fake_openai)
    fake_openai.script(events(chunk({"content": "All **done**."})))
    client = logged_in(live_server_url)
    with client.stream("POST", "/api/chat", json={"text": "hello"}) as response:
        conversation_id = list(sse_with_ids(response))[0][2]["conversation_id"]
    with client.stream("GET", f"/api/conversations/{conversation_id}/stream") as response:
        answered = list(sse_with_ids(response))
    missing = client.get("/api/conversations/999999/stream")
    client.close()

    assert [name for _, name, _ in answered] == ["snapshot"]
    snapshot = answered[0][2]
    assert (snapshot["status"], snapshot["text"]) == ("complete", "All **done**.")
    assert "<strong>done</strong>" in snapshot["html"]
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "NOT_FOUND"
