"""What one web process sends to the open pages reaches a page whose socket another process
holds (the Redis channel layer, as with TALORYS_WEB_PROCESSES > 1): a conversation renamed there,
and the notice of a turn that ended there.

Two daphnes on the test database and the test Redis behind one port (tests/round_robin.py):
the owner's HTTP connection lands on daphne 0, the page's socket on daphne 1. The rename is
sent to the group by the process that made it and nothing else relays it (the embedded mode's
database watcher, talorys/notifications/services.py, only looks for new notifications), so it
arrives only through a layer the processes share.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from agent.models import Conversation
from benchmarks._websocket import Closed, WebSocket
from talorys.notifications.models import Notification
from tests.agent.conftest import Processes
from tests.agent.test_reply_ready import gated, start_and_leave_over_http
from tests.agent.test_sse_live import logged_in
from tests.waiting import HANG_SECONDS, wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres, pytest.mark.redis]


@pytest.fixture
def live_server_env(redis_live_env) -> dict[str, str]:
    return redis_live_env | {"TALORYS_REPLY_READY_SECONDS": "0"}


class Page:
    """An open page's notifications socket, read in a thread of its own until it is closed:
    ``received`` holds every message, in order."""

    def __init__(self, url: str, cookie: str) -> None:
        self.port = urlsplit(url).port or 80
        self.cookie = cookie
        self.received: list[dict[str, Any]] = []
        self.connected = threading.Event()
        self.error: BaseException | None = None
        self._socket: WebSocket | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread = threading.Thread(target=asyncio.run, args=(self._read(),), daemon=True)

    async def _read(self) -> None:
        self._loop = asyncio.get_running_loop()
        try:
            self._socket = await WebSocket.connect(self.port, "/ws/notifications/", self.cookie)
        except BaseException as error:
            self.error = error
            raise
        finally:
            self.connected.set()
        with contextlib.suppress(Closed):
            while True:
                self.received.append(await self._socket.receive_json())

    def __enter__(self) -> Page:
        self._thread.start()
        assert self.connected.wait(HANG_SECONDS) and self.error is None, self.error
        return self

    def __exit__(self, *_: object) -> None:
        assert self._loop is not None and self._socket is not None
        asyncio.run_coroutine_threadsafe(self._socket.close(), self._loop)  # its read ends
        self._thread.join(HANG_SECONDS)

    def syncs(self) -> list[dict[str, Any]]:
        return [m for m in self.received if m["type"] == "sync"]

    def notifications(self, notification_id: int) -> list[dict[str, Any]]:
        return [m for m in self.received if m.get("notification", {}).get("id") == notification_id]


@pytest.fixture
def owner_and_page(processes: Processes) -> Iterator[tuple[httpx.Client, Page]]:
    """The owner logged in on daphne 0 (the proxy's first connection), and a page's socket on
    daphne 1 (its second), open once daphne 1 accepted it."""
    owner = logged_in(processes.url)
    cookie = f"sessionid={owner.cookies['sessionid']}"
    try:
        with Page(processes.url, cookie) as page:
            assert processes.answered(1, "WSCONNECT /ws/notifications/")
            yield owner, page
    finally:
        owner.close()


def test_a_rename_made_in_one_process_updates_the_page_on_the_other(processes, owner_and_page):
    owner, page = owner_and_page
    conversation = Conversation.objects.create(title="Earlier")

    renamed = owner.patch(f"/api/conversations/{conversation.pk}", json={"title": "Week plan"})

    assert renamed.status_code == 200, renamed.text
    assert processes.answered(0, f"PATCH /api/conversations/{conversation.pk}")
    wait_for(lambda: page.syncs(), "the rename on the page")
    assert page.syncs() == [
        {
            "type": "sync",
            "what": "conversation",
            "conversation_id": conversation.pk,
            "change": "renamed",
            "title": "Week plan",
        }
    ]


def test_a_notice_made_by_a_turn_in_one_process_reaches_the_page_on_the_other(
    processes, owner_and_page, fake_openai
):
    _owner, page = owner_and_page
    gate = gated(fake_openai)
    # A chat page starts a turn (on daphne 0, the proxy's third connection) and leaves while the
    # model waits: the turn ends there with no page following it, so daphne 0 makes the notice.
    starter, conversation_id, _ = start_and_leave_over_http(processes.url)
    gate.opened.set()
    starter.close()

    source = f"conversation:{conversation_id}"
    wait_for(lambda: Notification.objects.filter(source=source).exists(), "the notice")
    notice = Notification.objects.get(source=source)
    # The chat's streamed response was cut short, so daphne 0 logs no line for it; its login,
    # on the same connection, is daphne 0's second.
    wait_for(
        lambda: processes.requests(0).count("POST /api/auth/login") == 2,
        "the chat page's login in daphne 0's log",
    )
    wait_for(lambda: page.notifications(notice.pk), "the notice on the page")
    (message,) = page.notifications(notice.pk)
    assert message["notification"]["title"] == "Your reply is ready: Plan my week"
    assert "updated" not in message
