"""Personal API tokens: created and revoked by the owner, shown once, stored hashed, accepted by
the API only."""

from __future__ import annotations

import datetime as dt

import time_machine
from django.test import Client

from talorys.models import ApiToken
from talorys.security import api_token_create
from tests.conftest import ApiClient


def bearer(raw: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {raw}"}


def script_client() -> ApiClient:
    """A script: no cookies, no CSRF token, CSRF enforced like a browser would be."""
    return ApiClient(Client(enforce_csrf_checks=True))


def make_token(api: ApiClient, name: str = "backup script") -> dict:
    response = api.post("/api/auth/tokens", {"name": name})
    assert response.status_code == 201, response.content
    return response.json()


def test_a_new_token_is_shown_once_and_stored_hashed(api):
    created = make_token(api)
    raw = created["token"]
    assert raw.startswith("tal_") and len(raw) > 40
    assert raw.startswith(created["prefix"])

    listed = api.get("/api/auth/tokens").json()
    assert listed["count"] == 1
    item = listed["items"][0]
    assert set(item) == {"id", "name", "prefix", "created_at", "last_used_at", "revoked_at"}
    assert item["name"] == "backup script"
    assert raw not in api.get("/api/auth/tokens").content.decode()
    stored = ApiToken.objects.get(pk=created["id"])
    assert raw not in (stored.token_hash, stored.prefix, stored.name)


def test_a_token_works_for_reads_and_writes_without_csrf(api):
    raw = make_token(api)["token"]
    script = script_client()

    assert script.get("/api/tasks", headers=bearer(raw)).status_code == 200
    created = script.post("/api/tasks", {"title": "From cron"}, headers=bearer(raw))
    assert created.status_code == 201, created.content
    assert api.get("/api/tasks").json()["items"][0]["title"] == "From cron"


def test_the_last_use_is_recorded(api):
    created = make_token(api)
    assert created["last_used_at"] is None
    with time_machine.travel(dt.datetime(2030, 5, 1, 12, 0, tzinfo=dt.UTC), tick=False):
        script_client().get("/api/tasks", headers=bearer(created["token"]))
    item = api.get("/api/auth/tokens").json()["items"][0]
    assert item["last_used_at"].startswith("2030-05-01T12:00")


def test_a_revoked_token_is_refused(api):
    created = make_token(api)
    raw = created["token"]

    assert api.delete(f"/api/auth/tokens/{created['id']}").status_code == 204

    response = script_client().get("/api/tasks", headers=bearer(raw))
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "UNAUTHORIZED"
    item = api.get("/api/auth/tokens").json()["items"][0]
    assert item["revoked_at"] is not None
    # Revoking twice keeps the first time.
    assert api.delete(f"/api/auth/tokens/{created['id']}").status_code == 204
    assert api.get("/api/auth/tokens").json()["items"][0]["revoked_at"] == item["revoked_at"]


def test_revoking_one_token_leaves_the_others(api):
    first, second = make_token(api, "first"), make_token(api, "second")
    api.delete(f"/api/auth/tokens/{first['id']}")
    assert script_client().get("/api/tasks", headers=bearer(second["token"])).status_code == 200


def test_unknown_or_forged_tokens_are_refused(api):
    raw = make_token(api)["token"]
    script = script_client()
    for header in (raw[:-1] + ("A" if raw[-1] != "A" else "B"), "tal_nothing", "not-a-token"):
        response = script.get("/api/tasks", headers=bearer(header))
        assert response.status_code == 401
        assert response.json()["error"]["code"] == "UNAUTHORIZED"


def test_a_token_is_refused_by_the_pages(api):
    raw = make_token(api)["token"]
    script = Client()
    home = script.get("/", headers=bearer(raw))
    assert home.status_code == 302 and home["Location"].startswith("/login/")
    admin = script.get("/admin/", headers=bearer(raw))
    assert admin.status_code == 302 and admin["Location"].startswith("/admin/login/")


def test_a_token_cannot_change_the_password_or_manage_tokens(api, owner):
    created = make_token(api)
    script = script_client()
    headers = bearer(created["token"])
    password_before = owner.password

    attempts = [
        script.post(
            "/api/auth/password",
            {"current_password": "correct horse battery staple", "new_password": "x" * 20},
            headers=headers,
        ),
        script.get("/api/auth/tokens", headers=headers),
        script.post("/api/auth/tokens", {"name": "more"}, headers=headers),
        script.delete(f"/api/auth/tokens/{created['id']}", headers=headers),
    ]
    assert [response.status_code for response in attempts] == [401] * 4
    owner.refresh_from_db()
    assert owner.password == password_before
    assert ApiToken.objects.filter(revoked_at__isnull=True).count() == 1


def test_a_token_of_a_deactivated_user_is_refused(api, owner):
    raw = make_token(api)["token"]
    owner.is_active = False
    owner.save()
    assert script_client().get("/api/tasks", headers=bearer(raw)).status_code == 401


def test_a_token_needs_a_name(api):
    for body in ({"name": ""}, {"name": "   "}, {"name": "x" * 101}, {}, {"name": "a", "x": 1}):
        response = api.post("/api/auth/tokens", body)
        assert response.status_code == 422, body
        assert response.json()["error"]["code"] == "VALIDATION"
    assert ApiToken.objects.count() == 0


def test_revoking_a_token_that_is_not_yours_finds_nothing(api, django_user_model):
    other = django_user_model.objects.create_user(username="operator", password="x" * 12)
    token, raw = api_token_create(user=other, name="operator's")

    response = api.delete(f"/api/auth/tokens/{token.pk}")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "NOT_FOUND"
    assert script_client().get("/api/tasks", headers=bearer(raw)).status_code == 200
    assert api.get("/api/auth/tokens").json()["count"] == 0
