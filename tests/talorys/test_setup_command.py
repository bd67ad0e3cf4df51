"""`manage.py talorys_setup`: the owner account, from the environment or a generated password."""

from __future__ import annotations

import io
import re

import pytest
from django.contrib.auth import get_user_model
from django.contrib.sessions.models import Session
from django.core.management import CommandError, call_command
from django.test import Client

from tests.conftest import ApiClient

PASSWORD = "a long and unusual passphrase"


def setup(*args: str) -> str:
    out = io.StringIO()
    call_command("talorys_setup", "--noinput", *args, stdout=out)
    return out.getvalue()


def can_log_in(username: str, password: str) -> bool:
    return ApiClient(Client()).login(username, password).status_code == 200


@pytest.fixture
def env(monkeypatch):
    monkeypatch.delenv("TALORYS_OWNER_USERNAME", raising=False)
    monkeypatch.delenv("TALORYS_OWNER_PASSWORD", raising=False)
    return monkeypatch


def test_creates_the_owner_from_the_environment(db, env):
    env.setenv("TALORYS_OWNER_USERNAME", "ada")
    env.setenv("TALORYS_OWNER_PASSWORD", PASSWORD)

    out = setup()

    assert "Created the owner account 'ada'" in out
    assert PASSWORD not in out  # a password the operator chose is not echoed
    owner = get_user_model().objects.get(username="ada")
    assert owner.is_superuser and owner.is_staff  # the owner also operates /admin/
    assert can_log_in("ada", PASSWORD)


def test_generates_a_password_and_prints_it_once(db, env):
    out = setup()

    printed = re.search(r"OWNER PASSWORD \(shown once\): (\S+)", out)
    assert printed, out
    assert can_log_in("owner", printed[1])

    again = setup()
    assert "exists" in again
    assert "OWNER PASSWORD" not in again
    assert can_log_in("owner", printed[1])  # the second run kept the first password


def test_running_twice_keeps_the_first_password(db, env):
    env.setenv("TALORYS_OWNER_PASSWORD", PASSWORD)
    setup()
    env.setenv("TALORYS_OWNER_PASSWORD", "another long passphrase")
    setup()
    assert can_log_in("owner", PASSWORD)
    assert not can_log_in("owner", "another long passphrase")
    assert get_user_model().objects.count() == 1


def test_reset_password_changes_it_and_ends_every_session(db, env):
    env.setenv("TALORYS_OWNER_PASSWORD", PASSWORD)
    setup()
    browser = ApiClient(Client(enforce_csrf_checks=True))
    assert browser.login("owner", PASSWORD).status_code == 200

    env.setenv("TALORYS_OWNER_PASSWORD", "the replacement passphrase")
    out = setup("--reset-password")

    assert "New password set for 'owner'" in out
    assert browser.get("/api/tasks").status_code == 401
    assert Session.objects.count() == 0
    assert can_log_in("owner", "the replacement passphrase")
    assert not can_log_in("owner", PASSWORD)


def test_reset_password_without_one_generates_and_prints_it(db, env):
    env.setenv("TALORYS_OWNER_PASSWORD", PASSWORD)
    setup()
    env.delenv("TALORYS_OWNER_PASSWORD")

    printed = re.search(r"OWNER PASSWORD \(shown once\): (\S+)", setup("--reset-password"))

    assert printed
    assert can_log_in("owner", printed[1])
    assert not can_log_in("owner", PASSWORD)


@pytest.mark.parametrize("weak", ["short", "password123", "1234567890"])
def test_a_weak_password_is_refused_and_nothing_is_created(db, env, weak):
    env.setenv("TALORYS_OWNER_PASSWORD", weak)
    with pytest.raises(CommandError, match="Password refused"):
        setup()
    assert not get_user_model().objects.exists()


def test_a_weak_reset_password_keeps_the_old_one(db, env):
    env.setenv("TALORYS_OWNER_PASSWORD", PASSWORD)
    setup()
    browser = ApiClient(Client())
    browser.login("owner", PASSWORD)
    env.setenv("TALORYS_OWNER_PASSWORD", "short")

    with pytest.raises(CommandError, match="Password refused"):
        setup("--reset-password")

    assert can_log_in("owner", PASSWORD)
    assert browser.get("/api/tasks").status_code == 200
