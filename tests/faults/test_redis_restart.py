"""Redis restarted under a running Talorys: web, worker and beat reconnect by
themselves, with nobody restarting them.

Real processes on this test's PostgreSQL database and a Redis server of the test's own (so that
it can be stopped): daphne, a Celery worker and Celery beat, with production settings. While
Redis is down, the web process keeps answering (health says what is down, still 200; pages and
the API that need no Redis still work; nothing is a 500). Once Redis is back, with an empty
data set as after a restart without persistence: health is green again, beat's and the worker's
heartbeats are fresh (beat sends, the worker receives), and a reminder due after the restart
reaches an open notifications socket (beat → broker → worker → channel layer → daphne).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from typing import TypeVar

import httpx
import pytest
from channels_redis.core import RedisChannelLayer
from django.conf import settings
from django.utils import timezone

from automations.models import Automation
from automations.services.crud import automation_create
from benchmarks._load_clients import login
from benchmarks._websocket import Closed, WebSocket
from talorys.accounts.services import api_token_create
from talorys.notifications.models import Notification
from talorys.notifications.services import NOTIFICATIONS_GROUP
from talorys.ops.models import Heartbeat
from tests.conftest import OWNER_PASSWORD, live_server
from tests.faults.conftest import production_hash
from tests.faults.postgres import database_url
from tests.ops.running import CELERY_WORKER, kill
from tests.waiting import wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres, pytest.mark.redis]

HEARTBEAT_SECONDS = 1
T = TypeVar("T")
PROBE = {"what": "probe"}  # a page.sync message the test sends itself


def spawn(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        args,
        cwd=settings.BASE_DIR,
        env=env,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def health(url: str, token: str = "") -> httpx.Response:
    # Without a token (or a session) health shows the status only.
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.get(f"{url}/api/health", headers=headers, timeout=10)


def redis_parts(url: str, token: str) -> tuple[str, str]:
    report = health(url, token).json()
    return report["broker"], report["channel_layer"]


def fresh(name: str, since: dt.datetime) -> bool:
    at = Heartbeat.objects.filter(name=name).values_list("at", flat=True).first()
    return at is not None and at > since


async def notification_on_open_socket(
    port: int, cookie: str, redis_url: str, make: Callable[[], T]
) -> tuple[T, dict]:
    """Open the notifications socket as the page does after an outage, again after each 4503,
    until a probe sent through the restarted Redis comes back on it (daphne's layer may still
    hold a connection from before the restart when health already says ok: seen on CI); then
    ``make`` the reminder: what it made, and the notification that the same socket receives."""
    layer = RedisChannelLayer(hosts=[redis_url])
    deadline = time.monotonic() + 60
    while True:
        ws = await WebSocket.connect(port, "/ws/notifications/", cookie)
        try:
            await layer.group_send(NOTIFICATIONS_GROUP, {"type": "page.sync", "sync": PROBE})
            if await asyncio.wait_for(ws.receive_json(), 10) == {"type": "sync", **PROBE}:
                break
        except (Closed, TimeoutError):
            pass
        await ws.close()
        assert time.monotonic() < deadline, "no socket got a message through the channel layer"
        await asyncio.sleep(1)
    await layer.close_pools()
    try:
        made = await asyncio.to_thread(make)
        while True:
            frame = await asyncio.wait_for(ws.receive_json(), 60)
            if frame.get("type") == "notification":
                return made, frame["notification"]
    finally:
        await ws.close()


def test_web_worker_and_beat_reconnect_after_redis_restarts(
    needs_postgres, owner, redis_server, tmp_path
):
    production_hash(owner)
    env = os.environ | {
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": database_url(),
        "REDIS_URL": redis_server.url,
        "TALORYS_DATA_DIR": str(tmp_path),
        "TALORYS_HEARTBEAT_SECONDS": str(HEARTBEAT_SECONDS),
        "TALORYS_DISPATCH_SECONDS": "1",
    }
    web = ExitStack()
    url = web.enter_context(live_server(env, tmp_path, "web")).url
    port = int(url.rsplit(":", 1)[1])
    processes = [
        spawn(CELERY_WORKER, env, tmp_path / "worker.log"),
        spawn(
            [sys.executable, "-m", "celery", "-A", "config", "beat", "-l", "info"],
            env,
            tmp_path / "beat.log",
        ),
    ]
    try:
        started = timezone.now()
        wait_for(
            lambda: fresh("worker", started) and fresh("beat", started),
            "the first heartbeats",
            seconds=60,
        )
        _token, raw = api_token_create(user=owner, name="monitor")
        before = health(url, raw).json()
        assert (before["broker"], before["channel_layer"]) == ("ok", "ok"), before
        session = asyncio.run(login(url, OWNER_PASSWORD))

        redis_server.stop()
        down = health(url, raw)
        # 200 while the database answers: a Redis outage must not take the pages down.
        assert down.status_code == 200, down.content
        # Not this test's: the heartbeats, the versions, and the embedder (no process runs here).
        shown = {"worker": "", "beat": "", "setup": "", "version": "", "served_by": ""}
        shown |= {"embedder": "", "embedder_error": ""}
        assert down.json() | shown == {
            "status": "degraded",
            "database": "ok",
            "broker": "unavailable",
            "channel_layer": "unavailable",
            "worker": "",
            "beat": "",
            "setup": "",
            "version": "",
            "served_by": "",
            "embedder": "",
            "embedder_error": "",
        }
        with httpx.Client(base_url=url, cookies=session.cookies, timeout=10) as client:
            tasks = client.get("/api/tasks")
            assert tasks.status_code == 200, tasks.content  # the data needs no Redis
            assert client.get("/tasks/").status_code == 200
        time.sleep(3)  # long enough for every client's next try to fail and back off

        redis_server.start()
        back = timezone.now()
        wait_for(
            lambda: redis_parts(url, raw) == ("ok", "ok"), "broker and layer in health", seconds=60
        )
        wait_for(
            lambda: fresh("beat", back) and fresh("worker", back),
            "beat's and the worker's heartbeats after the restart",
            seconds=60,
        )

        # A reminder due now: beat dispatches it, the worker runs it and notifies, the channel
        # layer carries it to the socket daphne holds open.
        def reminder() -> Automation:
            due = (timezone.now() + dt.timedelta(seconds=2)).isoformat()
            return automation_create(
                name="After the restart",
                kind="reminder",
                message="Redis came back",
                schedule={"type": "once", "at": due},
            )

        automation, received = asyncio.run(
            notification_on_open_socket(port, session.cookie, redis_server.url, reminder)
        )
        assert received["title"] == "After the restart", received
        assert Notification.objects.filter(source=automation.source).count() == 1
    finally:
        for process in processes:
            kill(process)
        web.close()


def answers(url: str) -> bool:
    """Whether the web process answers at all (its health may be degraded)."""
    try:
        return health(url).status_code in (200, 503)
    except httpx.TransportError:
        return False
