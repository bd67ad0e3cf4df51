"""Attaches by an API token against a live daphne on PostgreSQL with a small pool.

A burst of token attaches (``GET /api/conversations/{id}/stream``), more than the pool has
connections, must neither exhaust the pool (a 503 for them or for the owner) nor hold a
connection while it waits for the reply's events; those beyond the token's cap are refused
with 429 at once (agent/live/slots.py). Before, each attach held its request's connection (the
token's check) while it waited for a trip's (the conversation's): with the pool's few
connections all held so, every attach waited out the pool's timeout and answered 503, and the
owner's request waited behind them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from talorys.accounts.services import api_token_create
from tests.agent.fake_openai import Gate, chunk, events
from tests.agent.test_connection_pool import _backend_pid, _connections_except
from tests.agent.test_runner import use_fake
from tests.agent.test_sse_live import logged_in, sse_events
from tests.waiting import HANG_SECONDS, wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]

POOL_SIZE = 4
PER_TOKEN = 8  # TALORYS_ATTACHES_PER_TOKEN, default
ATTACHES = 20  # more than the pool's connections and the token's cap
POOL_TIMEOUT = 30


@pytest.fixture
def live_server_env() -> dict[str, str]:
    return {
        "TALORYS_DB_POOL_MAX_SIZE": str(POOL_SIZE),
        "TALORYS_DB_POOL_MIN_SIZE": "1",
        # Far beyond what a request waits for a free connection on a loaded machine: a request
        # that finds none within it is answered 503.
        "TALORYS_DB_POOL_TIMEOUT_SECONDS": str(POOL_TIMEOUT),
    }


@dataclass
class _Attaches:
    """Concurrent attaches, each on its own connection: the status each got, and the refusals'
    bodies and Retry-After; those answered 200 stay open until ``release`` is set."""

    url: str
    path: str
    headers: dict[str, str]
    statuses: list[int] = field(default_factory=list)
    refusals: list[tuple[dict[str, Any], str | None]] = field(default_factory=list)
    attached: list[dict[str, Any]] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)
    start: threading.Barrier | None = None
    threads: list[threading.Thread] = field(default_factory=list)

    def open(self, count: int, *, extra: int = 0) -> threading.Barrier:
        """``count`` attaches, started together with ``extra`` more parties (the barrier)."""
        self.start = threading.Barrier(count + extra)
        self.threads = [threading.Thread(target=self._one, daemon=True) for _ in range(count)]
        for thread in self.threads:
            thread.start()
        return self.start

    def _one(self) -> None:
        assert self.start is not None
        with httpx.Client(base_url=self.url, headers=self.headers, timeout=HANG_SECONDS) as http:
            self.start.wait(HANG_SECONDS)
            with http.stream("GET", self.path) as response:
                if response.status_code != 200:
                    response.read()
                    self.refusals.append((response.json(), response.headers.get("Retry-After")))
                    self.statuses.append(response.status_code)
                    return
                # Kept until released: a generator let go closes the response, and the stream.
                received = sse_events(response)
                self.attached.append(_first_event(received))
                self.statuses.append(200)
                self.release.wait(HANG_SECONDS)

    def answered(self) -> bool:
        return len(self.statuses) == len(self.threads)

    def close(self) -> None:
        self.release.set()
        for thread in self.threads:
            thread.join(HANG_SECONDS)


def _first_event(received: Iterator[tuple[float, str, dict[str, Any]]]) -> dict[str, Any]:
    for _, name, data in received:
        return {"event": name, **data}
    raise AssertionError("the attach ended without an event")


def _attach_status(url: str, conversation_id: int, raw: str) -> int:
    headers = {"Authorization": f"Bearer {raw}"}
    with (
        httpx.Client(base_url=url, headers=headers, timeout=HANG_SECONDS) as http,
        http.stream("GET", f"/api/conversations/{conversation_id}/stream") as response,
    ):
        return response.status_code  # and hangs up


def _running_conversation(url: str, fake_openai: Any) -> tuple[int, Gate, httpx.Client]:
    """A conversation whose reply is running, silent until the gate opens."""
    use_fake(fake_openai)
    gate = Gate()
    fake_openai.script(events(chunk({"content": "Thinking"}), gate, chunk({"content": " done."})))
    client = logged_in(url)
    with client.stream("POST", "/api/chat", json={"text": "think"}) as response:
        for _, name, data in sse_events(response):
            if name == "text":
                return data["conversation_id"], gate, client
    raise AssertionError("the turn ended before its first text")


def test_a_burst_of_token_attaches_starves_neither_the_pool_nor_the_owner(
    live_server_url, fake_openai, owner
):
    conversation_id, gate, client = _running_conversation(live_server_url, fake_openai)
    _, raw = api_token_create(user=owner, name="script")
    attaches = _Attaches(
        live_server_url,
        f"/api/conversations/{conversation_id}/stream",
        {"Authorization": f"Bearer {raw}"},
    )
    try:
        start = attaches.open(ATTACHES, extra=1)
        start.wait(HANG_SECONDS)
        # The owner's request in the middle of the burst (once it has every connection of the
        # pool out, or has been answered), then while the attaches stay open.
        ours = [_backend_pid()]
        wait_for(
            lambda: attaches.answered() or _connections_except(ours) >= POOL_SIZE,
            "the attaches to take the pool's connections",
            interval=0.02,
        )
        asked = time.monotonic()
        during = client.get("/api/conversations", timeout=HANG_SECONDS)
        waited = time.monotonic() - asked
        wait_for(attaches.answered, "every attach to be answered")
        after = client.get(f"/api/conversations/{conversation_id}", timeout=HANG_SECONDS)
        statuses = sorted(attaches.statuses)
        refusals = list(attaches.refusals)
        attached = list(attaches.attached)
        # The attaches hang up, the reply still running: their slots go back, and the token
        # attaches again.
        attaches.close()
        wait_for(
            lambda: _attach_status(live_server_url, conversation_id, raw) == 200,
            "a slot given back",
        )
    finally:
        gate.opened.set()
        attaches.close()
        client.close()

    assert during.status_code == 200, during.text
    # Not a measure of speed: a request that had to wait for a held connection waits out most of
    # the pool's timeout (it did: 30 s), one that did not answers in a fraction of a second.
    assert waited < POOL_TIMEOUT / 2, waited
    assert after.status_code == 200, after.text
    assert statuses == [200] * PER_TOKEN + [429] * (ATTACHES - PER_TOKEN), statuses
    assert {event["event"] for event in attached} == {"snapshot"}
    for body, retry_after in refusals:
        assert body["error"]["code"] == "RATE_LIMITED"
        assert f"{PER_TOKEN} attaches" in body["error"]["message"]
        assert retry_after and int(retry_after) > 0
