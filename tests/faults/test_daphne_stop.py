"""A daphne stopped after a page it was serving was left by its client: the suite's live servers
(tests/conftest.py) are gone within seconds, where daphne itself would never exit.

The client goes (a browser test's page closes with the test) while the request's thread waits,
here on a table lock: Django drops the request but its thread goes on. Daphne's shutdown then
ends and closes its port without it. Let go, the thread calls the async rest of the chain
(a sync middleware's async_to_sync) on the stopped event loop and waits forever, and Python's
exit waits for the thread. ``daphne_stop`` kills a daphne that closed its port and has not
exited within EXIT_SECONDS; it waited HANG_SECONDS, and a browser test's teardown with it.
"""

from __future__ import annotations

import socket
import threading
import time
from contextlib import ExitStack

import httpx
import pytest
from django.db import connection, transaction

from tests.conftest import (
    HANG_SECONDS,
    OWNER_PASSWORD,
    _live_env,
    listens,
    live_server,
)
from tests.waiting import wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.subprocess]


def _waiting_on_a_lock() -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")  # fresh, inside the transaction
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
        return cursor.fetchone()[0] > 0


def _left_page(port: int, cookies: httpx.Cookies) -> None:
    """A page request whose client goes away while the server waits on the lock."""
    cookie = "; ".join(f"{name}={value}" for name, value in cookies.items())
    with socket.create_connection(("127.0.0.1", port)) as client:
        client.sendall(
            f"GET /tasks/ HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nCookie: {cookie}\r\n\r\n".encode()
        )
        wait_for(_waiting_on_a_lock, "the page's read of the owner's zone to wait on the lock")


def test_a_daphne_stopped_after_a_client_left_mid_request_is_gone_in_seconds(
    needs_postgres, owner, tmp_path
):
    server = ExitStack()
    live = server.enter_context(live_server(_live_env(tmp_path, {}), tmp_path, "daphne"))
    port = int(live.url.rsplit(":", 1)[1])
    api = httpx.Client(base_url=live.url, timeout=HANG_SECONDS)
    login = {"username": "owner", "password": OWNER_PASSWORD}
    assert api.post("/api/auth/login", json=login).status_code == 200
    stopping = threading.Thread(target=server.close)
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("LOCK TABLE talorys_ownersettings IN ACCESS EXCLUSIVE MODE")
        _left_page(port, api.cookies)
        # Answered after the close above: daphne has seen it, and Django dropped the request.
        assert api.get("/static/talorys/common.js").status_code == 200
        started = time.monotonic()
        stopping.start()
        closing = time.monotonic() + HANG_SECONDS / 4
        while listens(port) and time.monotonic() < closing:
            time.sleep(0.1)
    # The lock is let go: the request's thread goes on, into the stopped loop.
    stopping.join()
    assert time.monotonic() - started < HANG_SECONDS / 2
