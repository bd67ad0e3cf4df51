"""Login throttling: repeated failures from one client, or for one username, cool off."""

from __future__ import annotations

import datetime as dt

import pytest
import time_machine
from django.conf import settings
from django.test import Client, override_settings

from tests.conftest import OWNER_PASSWORD, ApiClient

START = dt.datetime(2030, 1, 7, 9, 0, tzinfo=dt.UTC)


def client_at(address: str) -> ApiClient:
    return ApiClient(Client(enforce_csrf_checks=True, REMOTE_ADDR=address))


def fail(client: ApiClient, username: str = "owner", times: int = 1) -> None:
    for _ in range(times):
        response = client.login(username, "not the password")
        assert response.status_code == 401
        assert response.json()["error"]["code"] == "UNAUTHORIZED"


def assert_rate_limited(response) -> int:
    assert response.status_code == 429, response.content
    assert response.json()["error"]["code"] == "RATE_LIMITED"
    retry_after = int(response["Retry-After"])
    assert 0 < retry_after <= settings.LOGIN_THROTTLE_WINDOW
    return retry_after


def test_failures_for_one_username_lock_it_even_with_the_right_password(owner):
    fail(client_at("127.0.0.2"), times=settings.LOGIN_FAILURES_PER_USERNAME)

    right = client_at("127.0.0.2").login()
    assert_rate_limited(right)
    # From another address too: the lock is on the username.
    elsewhere = client_at("127.0.0.3")
    assert_rate_limited(elsewhere.login())
    assert elsewhere.get("/api/auth/session").json()["authenticated"] is False


def test_failures_just_below_the_limit_do_not_lock(owner):
    fail(client_at("127.0.0.2"), times=settings.LOGIN_FAILURES_PER_USERNAME - 1)
    assert client_at("127.0.0.2").login().status_code == 200


def test_failures_from_one_address_lock_that_address_only(owner):
    attacker = client_at("127.0.0.2")
    for n in range(settings.LOGIN_FAILURES_PER_CLIENT):
        fail(attacker, username=f"guess{n}")

    assert_rate_limited(attacker.login())
    assert client_at("127.0.0.3").login().status_code == 200


def test_forged_forwarded_for_headers_do_not_dodge_the_address_limit(owner):
    attacker = client_at("127.0.0.2")
    for n in range(settings.LOGIN_FAILURES_PER_CLIENT):
        response = attacker.post(
            "/api/auth/login",
            {"username": f"guess{n}", "password": "nope"},
            headers={"X-Forwarded-For": f"198.51.100.{n}"},
        )
        assert response.status_code == 401
    assert_rate_limited(attacker.login())


@override_settings(TRUST_X_FORWARDED_FOR=True)
def test_behind_a_trusted_proxy_each_forwarded_client_has_its_own_limit(owner):
    proxy = client_at("127.0.0.2")
    attacker = {"X-Forwarded-For": "198.51.100.7"}
    for n in range(settings.LOGIN_FAILURES_PER_CLIENT):
        response = proxy.post(
            "/api/auth/login", {"username": f"guess{n}", "password": "nope"}, headers=attacker
        )
        assert response.status_code == 401

    owner_login = {"username": "owner", "password": OWNER_PASSWORD}
    assert_rate_limited(proxy.post("/api/auth/login", owner_login, headers=attacker))
    # The owner, behind the same proxy, is not locked out by the attacker's failures.
    elsewhere = {"X-Forwarded-For": "203.0.113.5"}
    assert proxy.post("/api/auth/login", owner_login, headers=elsewhere).status_code == 200


@override_settings(TRUST_X_FORWARDED_FOR=True)
def test_behind_a_proxy_the_clients_own_forwarded_for_entries_do_not_dodge_the_limit(owner):
    proxy = client_at("127.0.0.2")
    # The attacker writes any X-Forwarded-For it likes; our proxy appends the address it saw.
    for n in range(settings.LOGIN_FAILURES_PER_CLIENT):
        response = proxy.post(
            "/api/auth/login",
            {"username": f"guess{n}", "password": "nope"},
            headers={"X-Forwarded-For": f"203.0.113.{n}, 198.51.100.7"},
        )
        assert response.status_code == 401
    forged = {"X-Forwarded-For": "203.0.113.99, 198.51.100.7"}
    owner_login = {"username": "owner", "password": OWNER_PASSWORD}
    assert_rate_limited(proxy.post("/api/auth/login", owner_login, headers=forged))
    assert_rate_limited(
        proxy.post("/api/auth/login", owner_login, headers={"X-Forwarded-For": "198.51.100.7"})
    )
    # Another client behind the same proxy is not locked out.
    elsewhere = {"X-Forwarded-For": "203.0.113.99, 203.0.113.5"}
    assert proxy.post("/api/auth/login", owner_login, headers=elsewhere).status_code == 200


@override_settings(TRUST_X_FORWARDED_FOR=True, TRUSTED_PROXY_HOPS=2)
def test_with_two_trusted_proxies_the_client_is_the_second_entry_from_the_right(owner):
    proxy = client_at("127.0.0.2")
    for n in range(settings.LOGIN_FAILURES_PER_CLIENT):
        response = proxy.post(
            "/api/auth/login",
            {"username": f"guess{n}", "password": "nope"},
            # client-written, what the outer proxy saw, what the inner proxy saw (the outer one)
            headers={"X-Forwarded-For": f"203.0.113.{n}, 198.51.100.7, 10.0.0.{n}"},
        )
        assert response.status_code == 401
    owner_login = {"username": "owner", "password": OWNER_PASSWORD}
    attacker = {"X-Forwarded-For": "198.51.100.7, 10.0.0.1"}
    assert_rate_limited(proxy.post("/api/auth/login", owner_login, headers=attacker))
    elsewhere = {"X-Forwarded-For": "198.51.100.8, 10.0.0.1"}
    assert proxy.post("/api/auth/login", owner_login, headers=elsewhere).status_code == 200


def test_the_lock_lifts_after_the_window_and_retry_after_counts_down(owner):
    with time_machine.travel(START, tick=False) as clock:
        fail(client_at("127.0.0.2"), times=settings.LOGIN_FAILURES_PER_USERNAME)
        first = assert_rate_limited(client_at("127.0.0.2").login())
        assert first == pytest.approx(settings.LOGIN_THROTTLE_WINDOW, abs=1)

        clock.shift(dt.timedelta(minutes=5))
        later = assert_rate_limited(client_at("127.0.0.2").login())
        assert later == pytest.approx(settings.LOGIN_THROTTLE_WINDOW - 300, abs=1)

        clock.shift(dt.timedelta(seconds=later + 1))
        assert client_at("127.0.0.2").login().status_code == 200


def test_a_successful_login_clears_the_failures(owner):
    client = client_at("127.0.0.2")
    fail(client, times=settings.LOGIN_FAILURES_PER_USERNAME - 1)
    assert client.login().status_code == 200
    fail(client_at("127.0.0.2"), times=settings.LOGIN_FAILURES_PER_USERNAME - 1)
    assert client_at("127.0.0.2").login().status_code == 200


def test_the_username_lock_ignores_case_and_surrounding_spaces(owner):
    client = client_at("127.0.0.2")
    for name in ("owner", "OWNER", " Owner", "owner ", "oWnEr"):
        fail(client, username=name)
    assert_rate_limited(client.login())


def test_the_login_page_shares_the_throttle(owner):
    client = Client(REMOTE_ADDR="127.0.0.2")
    for _ in range(settings.LOGIN_FAILURES_PER_USERNAME):
        page = client.post("/login/", {"username": "owner", "password": "wrong"})
        assert page.status_code == 401
        assert b"Wrong username or password." in page.content

    page = client.post("/login/", {"username": "owner", "password": OWNER_PASSWORD})
    assert page.status_code == 429
    assert int(page["Retry-After"]) > 0
    assert b"Too many failed logins" in page.content
    assert client.get("/").status_code == 302  # not logged in
    # And the API sees the same lock.
    assert_rate_limited(client_at("127.0.0.9").login())


def test_a_username_with_a_nul_character_is_a_wrong_login_not_a_crash(owner):
    page = Client(REMOTE_ADDR="127.0.0.2").post(
        "/login/", {"username": "own\x00er", "password": OWNER_PASSWORD}
    )
    assert page.status_code == 401
    assert b"Wrong username or password." in page.content
    api = client_at("127.0.0.2").login("own\x00er", OWNER_PASSWORD)
    assert api.status_code == 422
    assert api.json()["error"]["code"] == "VALIDATION"


def test_the_login_page_only_sends_the_owner_on_within_this_site(owner):
    client = Client()
    to_other_site = client.post(
        "/login/?next=https://evil.example/",
        {"username": "owner", "password": OWNER_PASSWORD},
    )
    assert to_other_site.status_code == 302
    assert to_other_site["Location"] == "/"
    # Already logged in: the page moves on instead of asking again.
    again = client.get("/login/?next=/api/docs")
    assert again.status_code == 302
    assert again["Location"] == "/api/docs"
