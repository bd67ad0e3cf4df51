"""Embedded mode (no Redis: an in-memory channel layer per process): a notification another
process makes reaches an open page within 3 s, because the web process watches the table; one
made in the web process itself is sent on commit and not a second time by the watcher."""

from __future__ import annotations

import threading

import pytest
from asgiref.sync import sync_to_async
from channels.layers import InMemoryChannelLayer, get_channel_layer
from channels.testing import WebsocketCommunicator
from django.db import connection, transaction
from django.test import Client

from config.asgi import application
from talorys.notifications import services as notification_services
from talorys.notifications import services as notify
from tests.waiting import HANG_SECONDS

pytestmark = pytest.mark.django_db(transaction=True)


def socket(session_key: str) -> WebsocketCommunicator:
    headers = [
        (b"host", b"testserver"),
        (b"origin", b"http://testserver"),
        (b"cookie", f"sessionid={session_key}".encode()),
    ]
    return WebsocketCommunicator(application, "/ws/notifications/", headers=headers)


@pytest.fixture
def session_key(owner) -> str:
    assert isinstance(get_channel_layer(), InMemoryChannelLayer)  # embedded mode
    client = Client()
    client.force_login(owner)
    return client.cookies["sessionid"].value


def made_by_another_process(title: str) -> int:
    """A row written over another database connection without notify(): nothing is broadcast
    in this process, as when a worker process makes it."""
    made: list[int] = []

    def insert() -> None:
        try:
            made.append(
                notification_services.notification_create(title=title, kind="automation").pk
            )
        finally:
            connection.close()

    thread = threading.Thread(target=insert)
    thread.start()
    thread.join(10)
    return made[0]


async def test_a_notification_made_by_another_process_reaches_an_open_page(session_key):
    pages = [socket(session_key), socket(session_key)]
    for page in pages:
        connected, _ = await page.connect()
        assert connected
    notification_id = await sync_to_async(made_by_another_process)("From the worker")
    for page in pages:
        message = await page.receive_json_from(timeout=HANG_SECONDS)
        assert message["type"] == "notification"
        assert message["notification"]["id"] == notification_id
        assert message["notification"]["title"] == "From the worker"
    # One watcher for the process, not one per page: each page got it once.
    for page in pages:
        assert await page.receive_nothing(timeout=1.5)
        await page.disconnect()


async def test_a_notification_made_in_the_web_process_is_sent_once(session_key):
    page = socket(session_key)
    connected, _ = await page.connect()
    assert connected
    notification = await sync_to_async(notify.notification_send)(title="Made here")
    message = await page.receive_json_from(timeout=HANG_SECONDS)
    assert message["notification"]["id"] == notification.pk
    assert await page.receive_nothing(timeout=2.5)  # the watcher looked twice and sent nothing
    await page.disconnect()


async def test_the_watcher_stops_with_the_last_page_and_starts_again(session_key):
    page = socket(session_key)
    assert (await page.connect())[0]
    await page.disconnect()
    watcher = notify._watchers.get(__import__("asyncio").get_running_loop())
    assert watcher is not None and watcher.sockets == 0 and watcher.task is None
    page = socket(session_key)
    assert (await page.connect())[0]
    notification_id = await sync_to_async(made_by_another_process)("Later")
    assert (await page.receive_json_from(timeout=HANG_SECONDS))["notification"][
        "id"
    ] == notification_id
    await page.disconnect()


async def test_a_notification_committed_after_a_newer_one_still_reaches_the_page(
    needs_postgres, session_key
):
    """Ids are taken in one order and committed in another: the watcher looks back.

    PostgreSQL only: SQLite has one writer at a time (the "Quick" insert would wait for the
    slow transaction), so there ids are always committed in the order they are taken."""
    page = socket(session_key)
    assert (await page.connect())[0]
    taken, release = threading.Event(), threading.Event()
    made: list[int] = []

    def slow_transaction() -> None:
        try:
            with transaction.atomic():
                made.append(
                    notification_services.notification_create(title="Slow", kind="automation").pk
                )
                taken.set()
                release.wait(HANG_SECONDS)  # committed only after the newer one arrived
        finally:
            connection.close()

    slow = threading.Thread(target=slow_transaction)
    slow.start()
    await sync_to_async(taken.wait)(10)
    newer = await sync_to_async(made_by_another_process)("Quick")
    assert newer > made[0]
    assert (await page.receive_json_from(timeout=HANG_SECONDS))["notification"]["id"] == newer
    release.set()
    await sync_to_async(slow.join)(10)
    assert (await page.receive_json_from(timeout=HANG_SECONDS))["notification"]["id"] == made[0]
    assert await page.receive_nothing(timeout=1.5)
    await page.disconnect()
