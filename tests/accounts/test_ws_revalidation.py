"""Open WebSockets re-check their session: ended, expired or outdated sessions stop working.

A socket is authenticated at connect and may stay open for hours; /ws/chat/ re-checks before each
frame and /ws/notifications/ before each delivery. The consumers drop stale database connections
(which ends a test transaction), so these tests use committed data (``transaction=True``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

import pytest
import time_machine
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.test import Client, override_settings

from agent.models import Conversation, Message
from config.asgi import application
from talorys.accounts.services import owner_sessions_end
from talorys.notifications import services as notify
from talorys.notifications.models import Notification
from talorys.workspace.models import Task
from tests.agent.test_runner import use_fake
from tests.conftest import OWNER_PASSWORD, ApiClient
from tests.waiting import HANG_SECONDS

pytestmark = pytest.mark.django_db(transaction=True)

START = dt.datetime(2030, 3, 4, 8, 0, tzinfo=dt.UTC)
NEW_PASSWORD = "a much longer new passphrase"


def logged_in(password: str = OWNER_PASSWORD) -> ApiClient:
    client = ApiClient(Client(enforce_csrf_checks=True))
    assert client.login(password=password).status_code == 200
    return client


async def open_socket(path: str, client: ApiClient) -> WebsocketCommunicator:
    cookie = f"sessionid={client.client.cookies['sessionid'].value}".encode()
    headers = [(b"host", b"testserver"), (b"origin", b"http://testserver"), (b"cookie", cookie)]
    ws = WebsocketCommunicator(application, path, headers=headers)
    connected, code = await ws.connect()
    assert connected, code
    return ws


async def chat_turn(ws: WebsocketCommunicator, text: str) -> list[dict[str, Any]]:
    await ws.send_json_to({"type": "send", "text": text})
    received = [await ws.receive_json_from(timeout=HANG_SECONDS)]
    while received[-1]["type"] not in ("done", "error"):
        received.append(await ws.receive_json_from(timeout=HANG_SECONDS))
    return received


async def assert_refused_and_closed(ws: WebsocketCommunicator) -> None:
    event = await ws.receive_json_from(timeout=HANG_SECONDS)
    assert event["type"] == "error"
    assert event["code"] == "UNAUTHORIZED"
    assert event["message"]
    assert await ws.receive_output(timeout=HANG_SECONDS) == {
        "type": "websocket.close",
        "code": 4401,
    }


# --- how a socket's session ends (each runs elsewhere than on the socket) ----------------------


def sessions_ended(owner: Any, socket_client: ApiClient) -> None:
    owner_sessions_end(user=owner)


def password_changed_from_another_session(owner: Any, socket_client: ApiClient) -> None:
    laptop = logged_in()
    response = laptop.post(
        "/api/auth/password", {"current_password": OWNER_PASSWORD, "new_password": NEW_PASSWORD}
    )
    assert response.status_code == 200


def password_changed_without_ending_sessions(owner: Any, socket_client: ApiClient) -> None:
    # As the admin's password form does for other sessions: the rows stay, their hash is stale.
    owner.set_password(NEW_PASSWORD)
    owner.save()


def logged_out(owner: Any, socket_client: ApiClient) -> None:
    assert socket_client.post("/api/auth/logout").status_code == 200


ENDINGS = [
    sessions_ended,
    password_changed_from_another_session,
    password_changed_without_ending_sessions,
    logged_out,
]


# --- /ws/chat/ ----------------------------------------------------------------------------------


@pytest.mark.parametrize("end", ENDINGS)
async def test_a_chat_socket_refuses_the_next_frame_once_its_session_has_ended(
    owner, fake_openai, end: Callable[[Any, ApiClient], None]
):
    await sync_to_async(use_fake)(fake_openai)
    phone = await sync_to_async(logged_in)()
    ws = await open_socket("/ws/chat/", phone)
    try:
        first = await chat_turn(ws, "Add a task to water the plants")
        assert first[-1] == first[-1] | {"type": "done", "status": "complete"}
        messages = await Message.objects.acount()

        await sync_to_async(end)(owner, phone)

        await ws.send_json_to({"type": "send", "text": "Add a task to feed the cat"})
        await assert_refused_and_closed(ws)
    finally:
        await ws.disconnect()

    assert await Conversation.objects.acount() == 1
    assert await Message.objects.acount() == messages
    assert await Task.objects.filter(title="water the plants").aexists()
    assert not await Task.objects.filter(title="feed the cat").aexists()


async def test_a_cancel_frame_is_refused_too(owner):
    phone = await sync_to_async(logged_in)()
    ws = await open_socket("/ws/chat/", phone)
    try:
        await sync_to_async(owner_sessions_end)(user=owner)
        await ws.send_json_to({"type": "cancel", "conversation_id": 12345})
        # Not NOT_FOUND: a socket without a session learns nothing about conversations.
        await assert_refused_and_closed(ws)
    finally:
        await ws.disconnect()


async def test_an_invalid_frame_is_refused_for_the_session_first(owner):
    phone = await sync_to_async(logged_in)()
    ws = await open_socket("/ws/chat/", phone)
    try:
        await sync_to_async(owner_sessions_end)(user=owner)
        await ws.send_json_to({"type": "dance"})
        # Not VALIDATION: what a socket without a session sends is not looked at.
        await assert_refused_and_closed(ws)
    finally:
        await ws.disconnect()


async def test_an_idle_session_ends_its_open_chat_socket(owner):
    with time_machine.travel(START, tick=False) as clock:
        phone = await sync_to_async(logged_in)()
        ws = await open_socket("/ws/chat/", phone)
        try:
            clock.shift(dt.timedelta(days=6, hours=23))
            await ws.send_json_to({"type": "dance"})  # still live: the frame itself is judged
            assert (await ws.receive_json_from(timeout=HANG_SECONDS))["code"] == "VALIDATION"

            # Socket frames are not activity: seven idle days after the login, it ends.
            clock.shift(dt.timedelta(hours=1, minutes=2))
            await ws.send_json_to({"type": "send", "text": "Add a task to feed the cat"})
            await assert_refused_and_closed(ws)
        finally:
            await ws.disconnect()
    assert not await Conversation.objects.aexists()


@override_settings(SESSION_IDLE_TIMEOUT=3600, SESSION_ABSOLUTE_LIFETIME=2 * 3600)
async def test_a_busy_session_past_its_lifetime_ends_its_open_chat_socket(owner):
    with time_machine.travel(START, tick=False) as clock:
        phone = await sync_to_async(logged_in)()
        ws = await open_socket("/ws/chat/", phone)
        try:
            for _ in range(2):  # requests every 50 minutes keep the session from going idle
                clock.shift(dt.timedelta(minutes=50))
                assert (await sync_to_async(phone.get)("/api/tasks")).status_code == 200
            clock.shift(dt.timedelta(minutes=25))  # 2 h 05 after the login, 25 min idle
            await ws.send_json_to({"type": "send", "text": "Add a task to feed the cat"})
            await assert_refused_and_closed(ws)
        finally:
            await ws.disconnect()
    assert not await Conversation.objects.aexists()


async def test_the_session_that_changes_the_password_reconnects_with_its_new_cookie(
    owner, fake_openai
):
    # The change rotates this session's key (update_session_auth_hash), so a socket opened with
    # the old cookie ends like any other; the page's socket reconnects with the new one.
    await sync_to_async(use_fake)(fake_openai)
    laptop = await sync_to_async(logged_in)()
    old = await open_socket("/ws/chat/", laptop)
    try:
        response = await sync_to_async(laptop.post)(
            "/api/auth/password",
            {"current_password": OWNER_PASSWORD, "new_password": NEW_PASSWORD},
        )
        assert response.status_code == 200
        await old.send_json_to({"type": "send", "text": "Add a task to feed the cat"})
        await assert_refused_and_closed(old)
    finally:
        await old.disconnect()

    new = await open_socket("/ws/chat/", laptop)
    try:
        received = await chat_turn(new, "Add a task to feed the cat")
    finally:
        await new.disconnect()
    assert received[-1]["status"] == "complete"
    assert await Task.objects.filter(title="feed the cat").acount() == 1


# --- /ws/notifications/ -------------------------------------------------------------------------


@pytest.mark.parametrize("end", ENDINGS)
async def test_the_notifications_socket_stops_delivering_once_its_session_has_ended(
    owner, end: Callable[[Any, ApiClient], None]
):
    phone = await sync_to_async(logged_in)()
    page = await open_socket("/ws/notifications/", phone)
    try:
        await sync_to_async(notify.notification_send)(title="Before")
        delivered = await page.receive_json_from(timeout=HANG_SECONDS)
        assert delivered["notification"]["title"] == "Before"

        await sync_to_async(end)(owner, phone)

        await sync_to_async(notify.notification_send)(title="After")
        await assert_refused_and_closed(page)
        await sync_to_async(notify.notification_send)(title="Later")
        assert await page.receive_nothing(timeout=0.3)
    finally:
        await page.disconnect()
    # Nothing is lost: the notifications are saved, for the next login.
    assert await Notification.objects.acount() == 3


# An hour, not the default week: the channel layer forgets group members after a day.
@override_settings(SESSION_IDLE_TIMEOUT=3600)
async def test_an_idle_session_ends_its_notifications_socket(owner):
    with time_machine.travel(START, tick=False) as clock:
        phone = await sync_to_async(logged_in)()
        page = await open_socket("/ws/notifications/", phone)
        try:
            clock.shift(dt.timedelta(minutes=50))
            await sync_to_async(notify.notification_send)(title="Within the hour")
            delivered = await page.receive_json_from(timeout=HANG_SECONDS)
            assert delivered["notification"]["title"] == "Within the hour"

            clock.shift(dt.timedelta(minutes=12))  # 62 minutes without a request
            await sync_to_async(notify.notification_send)(title="After a week")
            await assert_refused_and_closed(page)
        finally:
            await page.disconnect()


async def test_other_sessions_sockets_keep_working_when_one_session_ends(owner):
    phone, laptop = await sync_to_async(logged_in)(), await sync_to_async(logged_in)()
    phone_page = await open_socket("/ws/notifications/", phone)
    laptop_page = await open_socket("/ws/notifications/", laptop)
    try:
        await sync_to_async(logged_out)(owner, phone)
        await sync_to_async(notify.notification_send)(title="Still here")
        await assert_refused_and_closed(phone_page)
        delivered = await laptop_page.receive_json_from(timeout=HANG_SECONDS)
        assert delivered["notification"]["title"] == "Still here"
    finally:
        await phone_page.disconnect()
        await laptop_page.disconnect()
