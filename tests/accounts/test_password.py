"""Changing the password ends every other session; argon2 hashes passwords in production."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.hashers import identify_hasher
from django.contrib.sessions.models import Session
from django.test import Client, override_settings

import config.settings as production
from tests.conftest import OWNER_PASSWORD, ApiClient

NEW_PASSWORD = "a much longer new passphrase"


def logged_in(password: str = OWNER_PASSWORD) -> ApiClient:
    client = ApiClient(Client(enforce_csrf_checks=True))
    assert client.login(password=password).status_code == 200
    return client


def change(client: ApiClient, current: str, new: str):
    return client.post("/api/auth/password", {"current_password": current, "new_password": new})


def test_changing_the_password_ends_every_other_session_but_this_one(owner):
    laptop, phone, tablet = logged_in(), logged_in(), logged_in()
    phone_key = phone.client.session.session_key

    response = change(laptop, OWNER_PASSWORD, NEW_PASSWORD)

    assert response.status_code == 200, response.content
    assert laptop.get("/api/tasks").status_code == 200
    assert laptop.get("/api/auth/session").json()["authenticated"] is True
    for other in (phone, tablet):
        ended = other.get("/api/tasks")
        assert ended.status_code == 401
        assert ended.json()["error"]["code"] == "UNAUTHORIZED"
    assert not Session.objects.filter(session_key=phone_key).exists()
    assert Session.objects.count() == 1
    # The changing session still passes CSRF for its next unsafe request.
    assert laptop.post("/api/tasks", {"title": "still here"}).status_code == 201


def test_the_new_password_logs_in_and_the_old_one_does_not(owner):
    assert change(logged_in(), OWNER_PASSWORD, NEW_PASSWORD).status_code == 200
    assert logged_in(NEW_PASSWORD).get("/api/tasks").status_code == 200
    old = ApiClient(Client()).login(password=OWNER_PASSWORD)
    assert old.status_code == 401


def test_a_wrong_current_password_is_forbidden_and_changes_nothing(owner):
    laptop, phone = logged_in(), logged_in()
    hash_before = owner.password

    response = change(laptop, "not my password", NEW_PASSWORD)

    assert response.status_code == 403
    assert response.json()["error"]["code"] == "FORBIDDEN"
    owner.refresh_from_db()
    assert owner.password == hash_before
    assert phone.get("/api/tasks").status_code == 200
    assert laptop.get("/api/tasks").status_code == 200


def test_a_weak_new_password_is_refused_and_changes_nothing(owner):
    laptop, phone = logged_in(), logged_in()
    for weak in ("short", "password123", OWNER_PASSWORD):
        response = change(laptop, OWNER_PASSWORD, weak)
        assert response.status_code == 422, weak
        assert response.json()["error"]["code"] == "VALIDATION"
    owner.refresh_from_db()
    assert owner.check_password(OWNER_PASSWORD)
    assert phone.get("/api/tasks").status_code == 200


def test_guessing_the_current_password_from_a_session_is_throttled(owner):
    laptop = logged_in()
    for _ in range(settings.LOGIN_FAILURES_PER_USERNAME):
        assert change(laptop, "guess", NEW_PASSWORD).status_code == 403
    response = change(laptop, OWNER_PASSWORD, NEW_PASSWORD)
    assert response.status_code == 429
    assert response.json()["error"]["code"] == "RATE_LIMITED"
    owner.refresh_from_db()
    assert owner.check_password(OWNER_PASSWORD)


def test_spaces_around_a_password_are_kept(owner):
    spaced = "  spaces are part of it  "
    assert change(logged_in(), OWNER_PASSWORD, spaced).status_code == 200
    assert ApiClient(Client()).login(password=spaced.strip()).status_code == 401
    assert ApiClient(Client()).login(password=spaced).status_code == 200


def test_changing_the_password_needs_a_login(anon_api, owner):
    response = change(anon_api, OWNER_PASSWORD, NEW_PASSWORD)
    assert response.status_code == 401
    owner.refresh_from_db()
    assert owner.check_password(OWNER_PASSWORD)


def test_argon2_hashes_passwords_in_production(django_user_model, db):
    # The suite hashes with MD5 for speed (tests/settings.py); production's list is checked here.
    assert production.PASSWORD_HASHERS[0] == "django.contrib.auth.hashers.Argon2PasswordHasher"
    with override_settings(PASSWORD_HASHERS=production.PASSWORD_HASHERS):
        user = django_user_model.objects.create_user(username="someone", password=NEW_PASSWORD)
        assert identify_hasher(user.password).algorithm == "argon2"
        assert user.password.startswith("argon2$argon2id$")
        assert user.check_password(NEW_PASSWORD)
        assert not user.check_password(OWNER_PASSWORD)
