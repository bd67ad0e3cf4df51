"""A web process killed (SIGKILL) mid-reply, and the database connections dropped mid-reply.

Real processes: daphne on this test's PostgreSQL database with the connection pool production
uses, the model the fake server, held mid-answer by a gate until the test is ready. A turn saves
the text streamed so far as it goes (agent/runner/lease.py) and renews a short lease
(services.LEASE_SECONDS): a killed process loses at most the last seconds of its reply and
frees its conversation within a lease, and a dropped connection is a trip to retry, not the end
of the turn.
"""

from __future__ import annotations

import json
import os
import signal
from typing import Any

import httpx
import pytest
from django.db import connection

from agent.models import Message
from tests.agent.fake_openai import Gate, chunk, events
from tests.agent.test_runner import use_fake
from tests.faults.test_database_outage import signed_in
from tests.waiting import wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]

# The lease was once 60 s: a conversation freed sooner proves the shorter lease,
# with a wide margin over the 15 s it is now, for a slow machine.
OLD_LEASE_SECONDS = 60
SAID = "The first half of the answer"


@pytest.fixture
def live_server_env() -> dict[str, str]:
    return {"TALORYS_DB_POOL_MAX_SIZE": "4"}  # the pool, as production runs it


def started_turn(client: httpx.Client, body: dict[str, Any], said: str) -> int:
    """POST /api/chat and read its events until ``said`` has streamed; the reply's id."""
    text, reply_id = "", 0
    with client.stream("POST", "/api/chat", json=body) as response:
        assert response.status_code == 200, response.read()
        for line in response.iter_lines():
            if not line.startswith("data: "):
                continue
            event = json.loads(line.removeprefix("data: "))
            if event["type"] == "start":
                reply_id = event["message_id"]
            elif event["type"] == "text":
                text += event["delta"]
                if text == said:
                    return reply_id
    raise AssertionError(f"the stream ended before {said!r}: {text!r}")


def saved(reply_id: int) -> Message:
    return Message.objects.get(pk=reply_id)


def test_a_killed_web_process_keeps_the_text_so_far_and_frees_the_conversation_soon(
    live_servers, fake_openai
):
    use_fake(fake_openai)
    gate = Gate(timeout=300)
    fake_openai.script(
        events(chunk({"content": "The first half "}), chunk({"content": "of the answer"}), gate),
        events(chunk({"content": "Here again."}), chunk(finish_reason="stop")),
    )
    (first,) = live_servers(1)
    reply_id = started_turn(signed_in(first.url), {"text": "Tell me"}, SAID)
    try:
        # Saved as it goes: within SAVE_SECONDS of the last words, with nothing more coming.
        wait_for(lambda: saved(reply_id).content == SAID, "the text so far to be saved")
        os.kill(first.pid, signal.SIGKILL)
        conversation_id = saved(reply_id).conversation_id

        # Another web process takes the conversation's next turn once the dead one's lease has
        # run out: 409 until then, then accepted; long before the old lease would have.
        (second,) = live_servers(1)
        client = signed_in(second.url)
        body = {"conversation_id": conversation_id, "text": "Again"}

        def accepted() -> bool:
            answer = client.post("/api/chat", json=body, timeout=60)
            assert answer.status_code in (200, 409), answer.text
            return answer.status_code == 200

        wait_for(accepted, "the conversation to take a turn", seconds=OLD_LEASE_SECONDS - 15)
    finally:
        gate.opened.set()
    old = saved(reply_id)
    # The dead turn's reply is closed as interrupted, with what it had said.
    assert (old.status, old.error_code, old.content) == (Message.Status.ERROR, "INTERRUPTED", SAID)
    replies = Message.objects.filter(conversation_id=conversation_id, role=Message.Role.ASSISTANT)
    assert replies.latest("id").content == "Here again."


def backends_end() -> int:
    """End every other connection to this test's database (the daphne's, pooled): what a
    PostgreSQL restart or a cut network does to them."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        return cursor.fetchone()[0]


def test_a_dropped_database_connection_mid_reply_does_not_end_the_turn(live_servers, fake_openai):
    use_fake(fake_openai)
    gate = Gate(timeout=300)
    fake_openai.script(
        events(
            chunk({"content": "The first half "}),
            chunk({"content": "of the answer"}),
            gate,
            chunk({"content": ", and the rest."}),
            chunk(finish_reason="stop"),
        ),
        events(chunk({"content": "Next."}), chunk(finish_reason="stop")),
    )
    (server,) = live_servers(1)
    client = signed_in(server.url)
    try:
        reply_id = started_turn(client, {"text": "Tell me"}, SAID)
        wait_for(lambda: saved(reply_id).content == SAID, "the text so far to be saved")
        assert backends_end() > 0  # the turn's pooled connections among them
    finally:
        gate.opened.set()

    def finished() -> bool:
        return saved(reply_id).status != Message.Status.STREAMING

    wait_for(finished, "the reply to be saved")
    reply = saved(reply_id)
    assert (reply.status, reply.content) == (
        Message.Status.COMPLETE,
        SAID + ", and the rest.",
    ), reply.error_message
    # The lease was given back: the next turn is taken at once.
    body = {"conversation_id": reply.conversation_id, "text": "Next"}
    answer = client.post("/api/chat", json=body, timeout=60)
    assert answer.status_code == 200, answer.text
