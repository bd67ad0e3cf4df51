"""Session idle timeout and absolute lifetime, on a controllable clock."""

from __future__ import annotations

import datetime as dt

import pytest
import time_machine
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from django.contrib.sessions.models import Session
from django.test import Client, override_settings

from config.asgi import application
from tests.conftest import OWNER_PASSWORD, ApiClient

START = dt.datetime(2030, 3, 4, 8, 0, tzinfo=dt.UTC)
DAY = dt.timedelta(days=1)
HOUR = dt.timedelta(hours=1)


def logged_in() -> ApiClient:
    client = ApiClient(Client(enforce_csrf_checks=True))
    assert client.login().status_code == 200
    return client


def assert_logged_out(client: ApiClient) -> None:
    response = client.get("/api/tasks")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "UNAUTHORIZED"


def test_a_session_ends_after_seven_idle_days(owner):
    with time_machine.travel(START, tick=False) as clock:
        client = logged_in()
        key = client.client.session.session_key

        clock.shift(7 * DAY + 2 * dt.timedelta(minutes=1))
        assert_logged_out(client)
        assert not Session.objects.filter(session_key=key).exists()
        # The owner pages send the browser to the login page.
        page = client.client.get("/")
        assert page.status_code == 302
        assert page["Location"].startswith("/login/")


def test_a_session_idle_for_just_under_seven_days_lives(owner):
    with time_machine.travel(START, tick=False) as clock:
        client = logged_in()
        clock.shift(7 * DAY - HOUR)
        assert client.get("/api/tasks").status_code == 200


def test_activity_keeps_a_session_alive_but_not_past_thirty_days(owner):
    with time_machine.travel(START, tick=False) as clock:
        client = logged_in()
        # A request every six days: never idle for seven, for 30 days.
        for _ in range(5):
            clock.shift(6 * DAY)
            assert client.get("/api/tasks").status_code == 200  # day 6, 12, 18, 24, 30
        clock.shift(-HOUR)  # day 29 plus 23 hours: still within the lifetime
        assert client.get("/api/tasks").status_code == 200
        clock.shift(2 * HOUR)  # day 30 plus an hour, only an hour after the last request
        assert_logged_out(client)


def test_a_request_within_a_minute_does_not_rewrite_the_session(owner):
    with time_machine.travel(START, tick=False) as clock:
        client = logged_in()
        key = client.client.session.session_key
        stored = Session.objects.get(session_key=key).session_data
        clock.shift(dt.timedelta(seconds=30))
        assert client.get("/api/tasks").status_code == 200
        assert Session.objects.get(session_key=key).session_data == stored
        clock.shift(dt.timedelta(minutes=2))
        assert client.get("/api/tasks").status_code == 200
        assert Session.objects.get(session_key=key).session_data != stored


@override_settings(SESSION_IDLE_TIMEOUT=3600, SESSION_ABSOLUTE_LIFETIME=4 * 3600)
def test_the_lifetimes_follow_the_settings(owner):
    minutes = dt.timedelta(minutes=1)
    with time_machine.travel(START, tick=False) as clock:
        idle = logged_in()
        clock.shift(62 * minutes)
        assert_logged_out(idle)

        busy = logged_in()
        for _ in range(4):
            clock.shift(50 * minutes)
            assert busy.get("/api/tasks").status_code == 200  # up to 3 h 20 after login
        clock.shift(30 * minutes)
        assert busy.get("/api/tasks").status_code == 200  # 3 h 50
        clock.shift(20 * minutes)
        assert_logged_out(busy)  # 4 h 10: past the lifetime, though busy


def test_an_admin_login_session_gets_the_same_lifetimes(owner):
    owner.is_staff = owner.is_superuser = True
    owner.save()
    with time_machine.travel(START, tick=False) as clock:
        client = Client()
        client.force_login(owner)  # logged in without our login service: no clocks yet
        assert client.get("/admin/").status_code == 200  # the clocks start here
        clock.shift(7 * DAY + 2 * dt.timedelta(minutes=1))
        response = client.get("/admin/")
        assert response.status_code == 302
        assert response["Location"].startswith("/admin/login/")


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("path", ["/ws/chat/", "/ws/notifications/"])
def test_an_idle_session_cannot_open_a_socket_either(owner, path):
    def connects(client: ApiClient) -> tuple[bool, int | None]:
        async def scenario() -> tuple[bool, int | None]:
            cookie = f"sessionid={client.client.cookies['sessionid'].value}".encode()
            ws = WebsocketCommunicator(
                application,
                path,
                headers=[
                    (b"host", b"testserver"),
                    (b"origin", b"http://testserver"),
                    (b"cookie", cookie),
                ],
            )
            connected, code = await ws.connect()
            await ws.disconnect()
            return connected, None if connected else code

        return async_to_sync(scenario)()

    with time_machine.travel(START, tick=False) as clock:
        client = logged_in()
        assert connects(client) == (True, None)
        clock.shift(7 * DAY + 2 * dt.timedelta(minutes=1))
        assert connects(client) == (False, 4401)


def session_cookie(client: Client) -> str:
    return client.cookies["sessionid"].value


@pytest.mark.parametrize("form", ["api", "page", "admin"])
def test_logging_in_again_gives_a_new_session_key_and_ends_the_old_one(owner, form):
    client = logged_in()
    first = session_cookie(client.client)
    assert client.get("/api/tasks").status_code == 200
    again = {
        "username": "owner",
        "password": OWNER_PASSWORD,
        "csrfmiddlewaretoken": client.csrf_token,
    }
    if form == "api":
        assert client.login().status_code == 200
    elif form == "page":
        assert client.client.post("/login/", again).status_code == 302
    else:
        assert client.client.post("/admin/login/?next=/admin/", again).status_code == 302

    second = session_cookie(client.client)
    assert second != first
    assert client.client.get("/api/auth/session").json()["authenticated"] is True
    assert not Session.objects.filter(session_key=first).exists()
    # Whoever kept the first cookie is logged out.
    stale = ApiClient(Client())
    stale.client.cookies["sessionid"] = first
    assert_logged_out(stale)
