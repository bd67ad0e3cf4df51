"""Database connections under load, against a live daphne on PostgreSQL with a small pool.

A running chat turn holds no connection while the model streams, so many concurrent turns share
a few pooled connections; when none frees up in time the answer is 503 SERVICE_UNAVAILABLE in
the envelope, never a 500. (benchmarks/concurrent_turns.py measures the same at 120 turns.)
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from django.db import connection, transaction

from agent.models import Message
from talorys.workspace.models import Task
from tests.agent.fake_openai import Stall, chunk, events
from tests.agent.test_runner import use_fake
from tests.agent.test_sse_live import logged_in, sse_events
from tests.waiting import wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]

POOL_SIZE = 4
TURNS = 30


@pytest.fixture
def live_server_env(request) -> dict[str, str]:
    # The live server pools its connections as production does (tests/settings.py).
    exhausting = request.node.name.startswith("test_an_exhausted_pool")
    return {
        "TALORYS_DB_POOL_MAX_SIZE": str(POOL_SIZE),
        "TALORYS_DB_POOL_MIN_SIZE": "1",
        # Generous, so a loaded CI machine does not time out a trip that merely waited its turn;
        # holding a connection across a stream would still wait far longer (see below). The
        # test that exhausts the pool waits out the timeout twice: short there.
        "TALORYS_DB_POOL_TIMEOUT_SECONDS": "2" if exhausting else "10",
    }


def _backend_pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


def _connections_except(pids: list[int]) -> int:
    """Connections to the test database (the live server's) other than the given ones."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE datname = current_database() AND NOT (pid = ANY(%s))",
            [pids],
        )
        return cursor.fetchone()[0]


def test_concurrent_turns_share_a_small_pool_and_none_fails(live_server_url, fake_openai):
    use_fake(fake_openai)
    # Each turn's model streams for about 4 s. Were a connection held across the stream, 30
    # turns would queue for 4 connections for about 30 s, far past the pool's 10 s timeout.
    slow = [chunk({"content": "a"}), Stall(1.0), chunk({"content": "b"}), Stall(1.0)]
    fake_openai.script(
        *[
            events(*slow, *slow, chunk({"content": "."}), chunk(finish_reason="stop"))
            for _ in range(TURNS)
        ]
    )
    client = logged_in(live_server_url)
    cookies, headers = dict(client.cookies), dict(client.headers)
    client.close()

    peak = 0
    stop = threading.Event()

    ours = [_backend_pid()]

    def watch() -> None:
        # On its own connection (Django's are per thread), left out of the count like ours.
        nonlocal peak
        mine = [*ours, _backend_pid()]
        try:
            while not stop.is_set():
                peak = max(peak, _connections_except(mine))
                time.sleep(0.05)
        finally:
            connection.close()

    def one_turn(n: int) -> tuple[int, str]:
        with (
            httpx.Client(
                base_url=live_server_url, cookies=cookies, headers=headers, timeout=60
            ) as http,
            http.stream("POST", "/api/chat", json={"text": f"Turn {n}"}) as response,
        ):
            if response.status_code != 200:
                response.read()
                return response.status_code, response.text
            last: dict[str, Any] = {}
            for _, _, data in sse_events(response):
                last = data
            return 200, str(last.get("status"))

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        with ThreadPoolExecutor(TURNS) as pool:
            results = list(pool.map(one_turn, range(TURNS)))
    finally:
        stop.set()
        watcher.join()

    assert [status for status, _ in results] == [200] * TURNS, results
    assert [outcome for _, outcome in results] == ["complete"] * TURNS
    assert Message.objects.filter(role="assistant", status="complete").count() == TURNS
    assert peak <= POOL_SIZE


def test_an_exhausted_pool_answers_503_in_the_envelope(live_server_url):
    task = Task.objects.create(title="Locked")
    client = logged_in(live_server_url)
    http = httpx.Client(
        base_url=live_server_url,
        cookies=dict(client.cookies),
        headers=dict(client.headers),
        timeout=30,
    )
    holders: list[httpx.Response] = []
    try:
        with transaction.atomic():
            # Each PATCH waits on this row lock while holding one of the pool's connections.
            Task.objects.select_for_update().get(pk=task.pk)
            threads = [
                threading.Thread(
                    target=lambda: holders.append(
                        http.patch(f"/api/tasks/{task.pk}", json={"title": "Unlocked"})
                    )
                )
                for _ in range(POOL_SIZE)
            ]
            for thread in threads:
                thread.start()
            wait_for(
                lambda: _waiting_on_locks() >= POOL_SIZE,
                "the PATCH requests to reach the lock",
                interval=0.05,
            )

            busy = http.get("/api/tasks")
            page = http.get("/")
        for thread in threads:
            thread.join(20)
    finally:
        http.close()
        client.close()

    assert busy.status_code == 503
    assert busy.json()["error"]["code"] == "SERVICE_UNAVAILABLE"
    assert busy.headers["Retry-After"]
    assert page.status_code == 503
    # The requests that held the connections finish normally once the lock goes.
    assert [r.status_code for r in holders] == [200] * POOL_SIZE
    assert Task.objects.get(pk=task.pk).title == "Unlocked"


def _waiting_on_locks() -> int:
    with connection.cursor() as cursor:
        # Inside a transaction PostgreSQL keeps showing its first snapshot of the statistics.
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
        return cursor.fetchone()[0]
