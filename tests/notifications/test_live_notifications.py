"""Open pages see new notifications live over /ws/notifications/ (sent on commit)."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.db import transaction
from django.test import Client

from config.asgi import application
from talorys.notifications import services as notify
from tests.waiting import HANG_SECONDS

pytestmark = pytest.mark.django_db(transaction=True)


def socket(session_key: str | None) -> WebsocketCommunicator:
    headers = [(b"host", b"testserver"), (b"origin", b"http://testserver")]
    if session_key:
        headers.append((b"cookie", f"sessionid={session_key}".encode()))
    return WebsocketCommunicator(application, "/ws/notifications/", headers=headers)


@pytest.fixture
def session_key(owner) -> str:
    client = Client()
    client.force_login(owner)
    return client.cookies["sessionid"].value


def send_in_a_transaction_that_fails() -> None:
    with transaction.atomic():
        notify.notification_send(title="Never shown")
        raise RuntimeError("rolled back")


async def test_an_open_page_receives_each_new_notification_once_committed(session_key):
    page = socket(session_key)
    connected, _ = await page.connect()
    assert connected
    with pytest.raises(RuntimeError):
        await sync_to_async(send_in_a_transaction_that_fails)()
    notification = await sync_to_async(notify.notification_send)(
        title="Call Sam", body="About Friday", kind="reminder", source="automation:3"
    )
    message = await page.receive_json_from(timeout=HANG_SECONDS)
    assert message["type"] == "notification"
    assert message["notification"] | {"created_at": None} == {
        "id": notification.pk,
        "title": "Call Sam",
        "body": "About Friday",
        "body_html": "<p>About Friday</p>\n",
        "kind": "reminder",
        "source": "automation:3",
        "created_at": None,
        "read_at": None,
    }
    assert await page.receive_nothing(timeout=0.2)  # the rolled-back one never came
    await page.disconnect()


async def test_a_socket_without_the_owner_session_is_refused():
    page = socket(None)
    connected, code = await page.connect()
    assert not connected and code == 4401
    await page.disconnect()
