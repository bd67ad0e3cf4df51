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
from tests.waiting import HANG_SECONDS, wait_for

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


def test_a_client_that_hangs_up_cancels_the_turn_on_the_live_server(live_server_url, fake_openai):
    use_fake(fake_openai)
    fake_openai.script(events(chunk({"content": "Thinking"}), Stall(15), chunk({"content": "."})))

    client = logged_in(live_server_url)
    with client.stream("POST", "/api/chat", json={"text": "think"}) as response:
        for _, name, _ in sse_events(response):
            if name == "text":
                break
    client.close()  # the connection goes away mid-stream

    wait_for(
        lambda: not Message.objects.filter(role="assistant", status="streaming").exists(),
        "the turn to stop after the client left",
    )
    reply = Message.objects.get(role="assistant")
    assert (reply.status, reply.content) == ("cancelled", "Thinking")
    assert reply.conversation.turn_id == ""
    assert fake_openai.disconnected.wait(HANG_SECONDS)

    # The conversation is free for the next turn.
    client = logged_in(live_server_url)
    cancel = client.post("/api/chat/cancel", json={"conversation_id": reply.conversation_id})
    client.close()
    assert cancel.json() == {"cancelled": False}
