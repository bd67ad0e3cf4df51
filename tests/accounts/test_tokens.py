"""Personal API tokens: created and revoked by the owner, shown once, stored hashed, accepted by
the API only."""

from __future__ import annotations

import datetime as dt

import pytest
import time_machine
from django.test import Client

from talorys.accounts.models import ApiToken
from talorys.accounts.services import api_token_create, bearer_secret
from talorys.owner.models import OwnerSettings
from tests.conftest import ApiClient


def bearer(raw: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {raw}"}


def script_client() -> ApiClient:
    """A script: no cookies, no CSRF token, CSRF enforced like a browser would be."""
    return ApiClient(Client(enforce_csrf_checks=True))


def make_token(api: ApiClient, name: str = "backup script", scope: str | None = None) -> dict:
    body = {"name": name} | ({"scope": scope} if scope else {})
    response = api.post("/api/auth/tokens", body)
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
    assert set(item) == {
        "id",
        "name",
        "prefix",
        "scope",
        "created_at",
        "last_used_at",
        "revoked_at",
    }
    assert item["scope"] == created["scope"] == "read"  # the default
    assert item["name"] == "backup script"
    assert raw not in api.get("/api/auth/tokens").content.decode()
    stored = ApiToken.objects.get(pk=created["id"])
    assert raw not in (stored.token_hash, stored.prefix, stored.name)


def test_a_write_token_works_for_reads_and_writes_without_csrf(api):
    created = make_token(api, scope="write")
    assert created["scope"] == "write"
    raw = created["token"]
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


@pytest.mark.parametrize(
    ("header", "secret"),
    [
        (None, None),
        ("", None),
        ("Basic dGFsOng=", None),
        ("Bearer", None),
        ("Bearer ", ""),
        ("bearer   tal_x  ", "tal_x"),
        ("BEARER tal_x", "tal_x"),
    ],
)
def test_the_bearer_header_is_read_one_way_for_api_v1_and_mcp(header, secret):
    assert bearer_secret(header) == secret


def test_a_lower_case_scheme_and_spaces_around_the_token_still_get_in(api):
    raw = make_token(api)["token"]
    headers = {"Authorization": f"bearer  {raw} "}
    assert script_client().get("/api/tasks", headers=headers).status_code == 200


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
    other = django_user_model.objects.create_user(username="helper", password="x" * 12)
    token, _raw = api_token_create(user=other, name="helper's")

    response = api.delete(f"/api/auth/tokens/{token.pk}")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "NOT_FOUND"
    token.refresh_from_db()
    assert token.revoked_at is None
    assert api.get("/api/auth/tokens").json()["count"] == 0


def test_a_read_token_may_read_but_not_change_anything(api):
    raw = make_token(api)["token"]
    script = script_client()
    task = api.post("/api/tasks", {"title": "Kept"}).json()

    assert script.get("/api/tasks", headers=bearer(raw)).status_code == 200
    attempts = [
        script.post("/api/tasks", {"title": "From cron"}, headers=bearer(raw)),
        script.patch(f"/api/tasks/{task['id']}", {"title": "Changed"}, headers=bearer(raw)),
        script.delete(f"/api/tasks/{task['id']}", headers=bearer(raw)),
        script.patch("/api/settings", {"time_zone": "Europe/Paris"}, headers=bearer(raw)),
    ]
    for response in attempts:
        assert response.status_code == 403, response.content
        assert response.json()["error"]["code"] == "FORBIDDEN"
        assert "may only read" in response.json()["error"]["message"]
    items = api.get("/api/tasks").json()["items"]
    assert [item["title"] for item in items] == ["Kept"]
    assert api.get("/api/settings").json()["time_zone"] == "UTC"


def test_a_token_scope_must_be_read_or_write(api):
    for scope in ("admin", "", "WRITE", 1):
        response = api.post("/api/auth/tokens", {"name": "x", "scope": scope})
        assert response.status_code == 422, scope
        assert response.json()["error"]["code"] == "VALIDATION"
    assert ApiToken.objects.count() == 0


# --- the stored model key cannot be sent elsewhere with a token -----------------------------------

PROVIDER_CHANGES = [
    {"model_base_url": "http://attacker.invalid/v1"},
    {"model_name": "other"},
    {"model_api_key": "sk-attacker"},
    {"model_api_key": ""},
    {"embeddings_base_url": "http://attacker.invalid/v1"},
    {"embeddings_model": "other"},
    {"embeddings_api_key": "sk-attacker"},
    {"semantic_enabled": True},
]


def test_a_write_token_cannot_change_provider_settings_or_keys(api):
    api.patch(
        "/api/settings",
        {"model_base_url": "http://127.0.0.1:9/v1", "model_name": "m", "model_api_key": "sk-kept"},
    )
    before = OwnerSettings.objects.get()
    raw = make_token(api, scope="write")["token"]
    script = script_client()

    for change in PROVIDER_CHANGES:
        response = script.patch("/api/settings", change, headers=bearer(raw))
        assert response.status_code == 403, change
        assert response.json()["error"]["code"] == "FORBIDDEN"
        assert "session" in response.json()["error"]["message"]
    # Mixed with an allowed change: nothing at all is applied.
    mixed = {"time_zone": "Europe/Paris", "model_base_url": "http://attacker.invalid/v1"}
    assert script.patch("/api/settings", mixed, headers=bearer(raw)).status_code == 403

    after = OwnerSettings.objects.get()
    assert (after.model_base_url, after.model_api_key, after.time_zone) == (
        before.model_base_url,
        before.model_api_key,
        before.time_zone,
    )
    # The rest of the settings are still the token's to change.
    allowed = script.patch("/api/settings", {"time_zone": "Europe/Paris"}, headers=bearer(raw))
    assert allowed.status_code == 200, allowed.content
    assert OwnerSettings.objects.get().model_api_key == "sk-kept"


def test_a_new_provider_url_clears_its_stored_key_unless_one_is_sent(api):
    api.patch(
        "/api/settings",
        {
            "model_base_url": "http://127.0.0.1:9/v1",
            "model_api_key": "sk-model",
            "embeddings_base_url": "http://127.0.0.1:9/v1",
            "embeddings_api_key": "sk-embed",
        },
    )

    same = api.patch("/api/settings", {"model_base_url": "http://127.0.0.1:9/v1"})
    assert same.json()["model_api_key_set"] is True  # the same URL keeps its key

    moved = api.patch("/api/settings", {"model_base_url": "http://127.0.0.1:10/v1"})
    assert moved.status_code == 200
    assert moved.json()["model_api_key_set"] is False
    assert moved.json()["embeddings_api_key_set"] is True  # the other provider's key stays
    assert OwnerSettings.objects.get().model_api_key == ""

    with_key = api.patch(
        "/api/settings",
        {"embeddings_base_url": "http://127.0.0.1:11/v1", "embeddings_api_key": "sk-new"},
    )
    assert with_key.json()["embeddings_api_key_set"] is True
    assert OwnerSettings.objects.get().embeddings_api_key == "sk-new"
