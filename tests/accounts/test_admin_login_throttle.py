"""The admin's login shares the owner's login throttle: one count, one lock, one window.

The owner is a superuser (talorys_setup), so /admin/login/ checks the same password as the API.
"""

from __future__ import annotations

import datetime as dt

import pytest
import time_machine
from django.conf import settings
from django.test import Client

from tests.accounts.test_throttling import assert_rate_limited, client_at, fail
from tests.conftest import OWNER_PASSWORD

START = dt.datetime(2030, 1, 7, 9, 0, tzinfo=dt.UTC)
WRONG_LOGIN = b"Please enter the correct username and password for a staff account."
LIMIT = settings.LOGIN_FAILURES_PER_USERNAME


@pytest.fixture
def operator(owner):
    owner.is_staff = owner.is_superuser = True
    owner.save()
    return owner


def admin_login(address: str, username: str = "owner", password: str = OWNER_PASSWORD):
    client = Client(REMOTE_ADDR=address)
    response = client.post(
        "/admin/login/?next=/admin/", {"username": username, "password": password}
    )
    return client, response


def admin_fail(address: str, username: str = "owner", times: int = 1) -> None:
    for _ in range(times):
        _client, page = admin_login(address, username, "not the password")
        assert page.status_code == 200
        assert WRONG_LOGIN in page.content


def assert_admin_locked(address: str) -> int:
    """The right password is refused with a 429 page, and the client is not logged in."""
    client, page = admin_login(address)
    assert page.status_code == 429
    assert b"Too many failed logins. Wait a while and try again." in page.content
    retry_after = int(page["Retry-After"])
    assert 0 < retry_after <= settings.LOGIN_THROTTLE_WINDOW
    assert client.get("/admin/").status_code == 302  # still the login page
    return retry_after


def test_the_right_password_logs_in_to_the_admin(operator):
    client, page = admin_login("127.0.0.2")
    assert page.status_code == 302
    assert client.get("/admin/").status_code == 200


def test_failures_at_the_admin_login_count_with_the_api_and_the_login_page(operator):
    admin_fail("127.0.0.2", times=LIMIT - 2)
    fail(client_at("127.0.0.3"))
    page = Client(REMOTE_ADDR="127.0.0.4").post(
        "/login/", {"username": "owner", "password": "wrong"}
    )
    assert page.status_code == 401

    # The username's limit is reached across the three forms: every one refuses the right password.
    assert_admin_locked("127.0.0.5")
    assert_rate_limited(client_at("127.0.0.6").login())
    refused = Client(REMOTE_ADDR="127.0.0.7").post(
        "/login/", {"username": "owner", "password": OWNER_PASSWORD}
    )
    assert refused.status_code == 429


def test_admin_failures_alone_lock_the_api_login(operator):
    admin_fail("127.0.0.2", times=LIMIT)

    assert_admin_locked("127.0.0.2")
    api = client_at("127.0.0.3")
    assert_rate_limited(api.login())
    assert api.get("/api/auth/session").json()["authenticated"] is False


def test_api_failures_lock_the_admin_login(operator):
    fail(client_at("127.0.0.2"), times=LIMIT)
    assert_admin_locked("127.0.0.3")


def test_admin_failures_below_the_limit_do_not_lock_and_a_login_clears_them(operator):
    admin_fail("127.0.0.2", times=LIMIT - 1)
    _client, page = admin_login("127.0.0.2")
    assert page.status_code == 302
    # Cleared for every form: as many failures again still leave the API open.
    admin_fail("127.0.0.2", times=LIMIT - 1)
    assert client_at("127.0.0.3").login().status_code == 200


def test_admin_failures_from_one_address_lock_that_address_at_the_api(operator):
    for n in range(settings.LOGIN_FAILURES_PER_CLIENT):
        admin_fail("127.0.0.2", username=f"guess{n}")

    assert_admin_locked("127.0.0.2")
    assert_rate_limited(client_at("127.0.0.2").login())
    assert client_at("127.0.0.3").login().status_code == 200


def test_the_admin_lock_lifts_after_the_window(operator):
    with time_machine.travel(START, tick=False) as clock:
        admin_fail("127.0.0.2", times=LIMIT)
        first = assert_admin_locked("127.0.0.2")
        assert first == pytest.approx(settings.LOGIN_THROTTLE_WINDOW, abs=1)

        clock.shift(dt.timedelta(minutes=5))
        later = assert_admin_locked("127.0.0.2")
        assert later == pytest.approx(settings.LOGIN_THROTTLE_WINDOW - 300, abs=1)
        # The API reports the same wait.
        api_wait = assert_rate_limited(client_at("127.0.0.3").login())
        assert api_wait == pytest.approx(later, abs=1)

        clock.shift(dt.timedelta(seconds=later + 1))
        client, page = admin_login("127.0.0.2")
        assert page.status_code == 302
        assert client.get("/admin/").status_code == 200


def test_a_username_that_is_not_staff_cannot_use_the_admin(owner):
    # The admin also wants is_staff: without it, the right password is still no admin login.
    owner.is_staff = False
    owner.save()
    client, page = admin_login("127.0.0.2")
    assert page.status_code == 200
    assert WRONG_LOGIN in page.content
    assert client.get("/admin/").status_code == 302


def test_a_username_with_a_nul_character_is_a_wrong_login_not_a_crash(operator):
    _client, page = admin_login("127.0.0.2", username="own\x00er")
    assert page.status_code == 200
    assert b"Null characters are not allowed." in page.content
