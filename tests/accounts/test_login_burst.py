"""A burst of concurrent logins: the attempt is counted before the password is hashed, and a
process hashes at most LOGIN_CONCURRENT_HASHES passwords at once (argon2 costs ~100 MiB each).

Real threads against the real view; the hasher is Django's MD5 one, slowed down so that the
threads overlap, and counting how many passwords it checked and how many at once.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.contrib.auth.hashers import MD5PasswordHasher
from django.db import connection
from django.test import Client, override_settings

from tests.conftest import OWNER_PASSWORD, ApiClient

BURST = 30


class SlowCountingHasher(MD5PasswordHasher):
    """MD5 (so the owner fixture's hash still verifies), taking 0.2 s per password."""

    lock = threading.Lock()
    checked = 0
    running = 0
    peak = 0

    @classmethod
    def reset(cls) -> None:
        cls.checked = cls.running = cls.peak = 0

    inside = threading.local()  # MD5's verify calls encode: count the outer call only

    def _slowly(self, work):
        cls = type(self)
        if getattr(cls.inside, "busy", False):
            return work()
        cls.inside.busy = True
        with cls.lock:
            cls.checked += 1
            cls.running += 1
            cls.peak = max(cls.peak, cls.running)
        try:
            time.sleep(0.2)
            return work()
        finally:
            with cls.lock:
                cls.running -= 1
            cls.inside.busy = False

    def verify(self, password, encoded):
        return self._slowly(lambda: super(SlowCountingHasher, self).verify(password, encoded))

    def encode(self, password, salt):
        return self._slowly(lambda: super(SlowCountingHasher, self).encode(password, salt))


SLOW_HASHER = [f"{__name__}.SlowCountingHasher"]


def burst(username: str, password: str = "not the password") -> list:
    start = threading.Barrier(BURST)

    def one(_n: int):
        client = ApiClient(Client(enforce_csrf_checks=True))
        start.wait()
        try:
            return client.post("/api/auth/login", {"username": username, "password": password})
        finally:
            connection.close()  # each thread has its own connection

    SlowCountingHasher.reset()
    with ThreadPoolExecutor(BURST) as pool:
        return list(pool.map(one, range(BURST)))


def statuses(responses: list) -> dict[int, int]:
    counted: dict[int, int] = {}
    for response in responses:
        counted[response.status_code] = counted.get(response.status_code, 0) + 1
    return counted


@pytest.mark.django_db(transaction=True)
@override_settings(PASSWORD_HASHERS=SLOW_HASHER, LOGIN_CONCURRENT_HASHES=BURST)
@pytest.mark.parametrize("username", ["owner", "nobody"])
def test_concurrent_wrong_logins_check_no_more_passwords_than_the_limit(
    settings, django_user_model, username
):
    django_user_model.objects.create_superuser(username="owner", password=OWNER_PASSWORD)
    responses = burst(username)

    limit = settings.LOGIN_FAILURES_PER_USERNAME
    assert SlowCountingHasher.checked == limit
    assert statuses(responses) == {401: limit, 429: BURST - limit}
    for response in responses:
        if response.status_code == 429:
            assert response.json()["error"]["code"] == "RATE_LIMITED"
            assert int(response["Retry-After"]) > 0
    # The owner, with the right password, is locked out like the attacker until the window ends.
    SlowCountingHasher.reset()
    right = ApiClient(Client(enforce_csrf_checks=True)).login(username, OWNER_PASSWORD)
    assert right.status_code == 429
    assert SlowCountingHasher.checked == 0


@pytest.mark.django_db(transaction=True)
@override_settings(
    PASSWORD_HASHERS=SLOW_HASHER,
    LOGIN_CONCURRENT_HASHES=2,
    LOGIN_FAILURES_PER_USERNAME=1000,
    LOGIN_FAILURES_PER_CLIENT=1000,
)
def test_a_process_hashes_at_most_a_few_passwords_at_once(django_user_model):
    django_user_model.objects.create_superuser(username="owner", password=OWNER_PASSWORD)
    responses = burst("owner")

    assert 1 <= SlowCountingHasher.peak <= 2
    counted = statuses(responses)
    assert set(counted) <= {401, 429} and counted[401] == SlowCountingHasher.checked
    busy = [r for r in responses if r.status_code == 429]
    assert busy and all(r["Retry-After"] == "1" for r in busy)
    assert all("at once" in r.json()["error"]["message"] for r in busy)
    # A refusal for lack of a slot costs no attempt: the owner gets in right after.
    SlowCountingHasher.reset()
    assert ApiClient(Client(enforce_csrf_checks=True)).login().status_code == 200


@pytest.mark.django_db(transaction=True)
@override_settings(PASSWORD_HASHERS=SLOW_HASHER, LOGIN_CONCURRENT_HASHES=BURST)
def test_concurrent_wrong_current_passwords_are_counted_the_same_way(settings, django_user_model):
    django_user_model.objects.create_superuser(username="owner", password=OWNER_PASSWORD)
    owner = ApiClient(Client(enforce_csrf_checks=True))
    assert owner.login().status_code == 200
    start = threading.Barrier(BURST)

    def one(_n: int):
        start.wait()
        try:
            return owner.post(
                "/api/auth/password",
                {"current_password": "not the password", "new_password": "x" * 20},
            )
        finally:
            connection.close()

    SlowCountingHasher.reset()
    with ThreadPoolExecutor(BURST) as pool:
        responses = list(pool.map(one, range(BURST)))

    limit = settings.LOGIN_FAILURES_PER_USERNAME
    assert SlowCountingHasher.checked == limit
    assert statuses(responses) == {403: limit, 429: BURST - limit}
