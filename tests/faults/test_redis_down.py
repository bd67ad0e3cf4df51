"""Redis down under a running web process: what needs only the database keeps
working, and what needs Redis says so cleanly, never a 500.

A live daphne with production settings on this test's PostgreSQL database and a Redis server of
the test's own, killed (SIGKILL: no goodbye to its clients) before the checks:

* login (the API, /login/) works from the database: the failed-login throttle counts in this
  process's memory while its shared counter in Redis cannot be reached, so a wrong password is
  still a 401 and a burst of them still meets 429;
* the chat socket needs no channel layer (a cancel reaches the turn through the database): it
  connects and runs a turn;
* the notifications socket, whose live updates come through the channel layer, is accepted and
  closed with 4503 ("try again later"; RFC 6455's 1013 cannot be sent through daphne): the page
  reconnects with backoff until Redis is back.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator

import httpx
import pytest

from benchmarks._load_clients import Session, login
from benchmarks._websocket import Closed, Refused, WebSocket
from talorys.web.websocket import WEBSOCKET_TRY_AGAIN_LATER
from tests.conftest import OWNER_PASSWORD, live_server
from tests.faults.conftest import production_hash
from tests.faults.postgres import database_url

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres, pytest.mark.redis]

FAILURES_PER_USERNAME = 3


@pytest.fixture
def web(needs_postgres, owner, redis_server, tmp_path) -> Iterator[str]:
    """A daphne with production settings whose cache and channel layer are ``redis_server``."""
    production_hash(owner)
    env = os.environ | {
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": database_url(),
        "REDIS_URL": redis_server.url,
        "TALORYS_DATA_DIR": str(tmp_path),
        "TALORYS_LOGIN_FAILURES_PER_USERNAME": str(FAILURES_PER_USERNAME),
    }
    with live_server(env, tmp_path, "web") as server:
        yield server.url


def _log_in(url: str, password: str) -> httpx.Response:
    return httpx.post(
        f"{url}/api/auth/login",
        json={"username": "owner", "password": password},
        headers={"Origin": url},
        timeout=30,
    )


def test_login_works_from_the_database_while_redis_is_down(web, redis_server, tmp_path):
    redis_server.stop()

    refused = _log_in(web, "wrong")
    assert refused.status_code == 401, refused.content
    assert refused.json()["error"]["code"] == "UNAUTHORIZED"

    session = asyncio.run(login(web, OWNER_PASSWORD))
    with httpx.Client(base_url=web, cookies=session.cookies, timeout=30) as client:
        assert client.get("/api/tasks").status_code == 200
    page = httpx.post(
        f"{web}/login/",
        data={"username": "owner", "password": OWNER_PASSWORD},
        headers={"Origin": web},
        timeout=30,
    )
    assert page.status_code in (302, 403), page.content  # a redirect in, or CSRF: never a 500

    # Still throttled, by this process's own count while the shared one is out of reach.
    answers = [_log_in(web, "wrong").status_code for _ in range(FAILURES_PER_USERNAME + 1)]
    assert answers[:FAILURES_PER_USERNAME] == [401] * FAILURES_PER_USERNAME, answers
    assert answers[-1] == 429, answers
    assert "Traceback" not in (tmp_path / "web.log").read_text()


async def _chat_turn(session: Session) -> list[dict]:
    ws = await WebSocket.connect(session.port, "/ws/chat/", session.cookie)
    try:
        await ws.send_json({"type": "send", "text": "Hello while Redis is down"})
        frames = []
        while not frames or frames[-1]["type"] != "done":
            frames.append(await asyncio.wait_for(ws.receive_json(), 60))
        return frames
    finally:
        await ws.close()


async def _notifications_close_code(session: Session) -> int | None:
    ws = await WebSocket.connect(session.port, "/ws/notifications/", session.cookie)
    try:
        await asyncio.wait_for(ws.receive_json(), 60)
    except Closed as closed:
        return closed.code
    finally:
        await ws.close()
    return None


def test_sockets_while_redis_is_down_chat_works_notifications_say_try_again(
    web, redis_server, tmp_path
):
    session = asyncio.run(login(web, OWNER_PASSWORD))
    redis_server.stop()

    try:
        frames = asyncio.run(_chat_turn(session))
    except Refused as refused:
        pytest.fail(f"the chat socket's handshake was answered {refused.status}")
    assert frames[-1]["status"] == "complete", frames

    try:
        code = asyncio.run(_notifications_close_code(session))
    except Refused as refused:
        pytest.fail(f"the notifications socket's handshake was answered {refused.status}")
    log = (tmp_path / "web.log").read_text()
    assert code == WEBSOCKET_TRY_AGAIN_LATER, log[-3000:]
    assert "Traceback" not in log
