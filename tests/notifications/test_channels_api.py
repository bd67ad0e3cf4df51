"""/api/channels: the owner's session adds, edits, tests and deletes channels; the URL, which
holds the destination's secrets, is written and never read back (nor by tokens, nor in a
backup); bad input is refused and changes nothing."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from talorys.accounts.models import ApiToken
from talorys.accounts.services import api_token_create
from talorys.notifications.models import Channel, Notification
from tests.notifications.servers import Receiver

SECRET = "s3cr3t-b0t-t0ken-4242"
TELEGRAM = f"tgram://123456789:{SECRET}/987654321/"


@pytest.fixture
def webhook():
    receiver = Receiver()
    yield receiver
    receiver.stop()


def test_a_channel_is_added_listed_edited_and_deleted_without_its_url_ever_coming_back(api):
    created = api.post("/api/channels", {"name": "Telegram", "url": TELEGRAM})
    assert created.status_code == 201, created.content
    body = created.json()
    assert body["service"] == "Telegram"
    assert body["kinds"] == ["info", "reminder", "digest", "automation", "approval", "error"]
    assert body["enabled"] is True and body["last_error"] == ""
    assert body["masked_url"].startswith("tgram://") and SECRET not in body["masked_url"]
    channel_id = body["id"]

    edited = api.patch(
        f"/api/channels/{channel_id}",
        {"name": "My phone", "kinds": ["approval", "reminder"], "enabled": False},
    )
    assert edited.status_code == 200, edited.content
    assert edited.json()["kinds"] == ["reminder", "approval"]
    assert Channel.objects.get().url == TELEGRAM  # a URL left out is kept

    for response in (
        created,
        edited,
        api.get("/api/channels"),
        api.get(f"/api/channels/{channel_id}"),
        api.get("/settings/"),
        api.get("/api/openapi.json"),
    ):
        assert SECRET not in response.content.decode(), response.request["PATH_INFO"]

    assert api.delete(f"/api/channels/{channel_id}").status_code == 204
    assert not Channel.objects.exists()
    assert api.delete(f"/api/channels/{channel_id}").json()["error"]["code"] == "NOT_FOUND"


@pytest.mark.parametrize(
    ("payload", "says"),
    [
        ({"name": "X", "url": "https://example.org/hook"}, "not an address Apprise can send to"),
        ({"name": "X", "url": "nonsense://whatever"}, "not an address Apprise can send to"),
        ({"name": "X", "url": "no scheme at all"}, "not an address Apprise can send to"),
        ({"name": "X", "url": "json://127.0.0.1/h", "kinds": ["gossip"]}, "kinds"),
        ({"name": " ", "url": "json://127.0.0.1/h"}, "name"),
        ({"name": "X", "url": "json://127.0.0.1/h", "extra": 1}, "extra"),
        ({"name": "X" * 101, "url": "json://127.0.0.1/h"}, "name"),
    ],
)
def test_bad_input_is_refused_and_changes_nothing(api, payload, says):
    response = api.post("/api/channels", payload)
    assert response.status_code == 422, response.content
    assert says in json.dumps(response.json()), response.json()
    assert not Channel.objects.exists()


def test_names_are_unique_whatever_their_case_and_a_bad_edit_changes_nothing(api):
    first = api.post("/api/channels", {"name": "Phone", "url": "ntfy://127.0.0.1/a"}).json()
    again = api.post("/api/channels", {"name": "phone", "url": "ntfy://127.0.0.1/b"})
    assert again.status_code == 409 and "exists already" in again.json()["error"]["message"]
    other = api.post("/api/channels", {"name": "Mail", "url": "json://127.0.0.1/h"}).json()
    clash = api.patch(f"/api/channels/{other['id']}", {"name": "PHONE"})
    assert clash.status_code == 409
    bad = api.patch(f"/api/channels/{first['id']}", {"url": "nonsense://x", "name": "New"})
    assert bad.status_code == 422
    assert sorted(Channel.objects.values_list("name", "url")) == [
        ("Mail", "json://127.0.0.1/h"),
        ("Phone", "ntfy://127.0.0.1/a"),
    ]


def test_send_a_test_says_whether_it_arrived_and_why_not(api, webhook):
    url = f"json://127.0.0.1:{webhook.port}/hook"
    channel = api.post("/api/channels", {"name": "Webhook", "url": url}).json()
    sent = api.post(f"/api/channels/{channel['id']}/test")
    assert sent.json() == {"sent": True, "error": ""}
    assert webhook.received[0]["title"] == "Talorys test"
    assert api.get(f"/api/channels/{channel['id']}").json()["last_success_at"]

    webhook.answers = [500]
    failed = api.post(f"/api/channels/{channel['id']}/test").json()
    assert failed["sent"] is False and "500" in failed["error"]
    row = api.get(f"/api/channels/{channel['id']}").json()
    assert "500" in row["last_error"] and row["last_failure_at"]


def test_a_failure_never_shows_the_urls_secrets(api):
    # Port 9: nothing listens. The secret is in the path, where a plugin might log it.
    url = f"json://127.0.0.1:9/{SECRET}?-X-Api-Key={SECRET}x"
    channel = api.post("/api/channels", {"name": "Hook", "url": url}).json()
    failed = api.post(f"/api/channels/{channel['id']}/test").json()
    assert failed["sent"] is False and failed["error"]
    assert SECRET not in failed["error"]
    assert SECRET not in api.get(f"/api/channels/{channel['id']}").content.decode()


def test_channels_are_the_owners_session_only(api, owner):
    api.post("/api/channels", {"name": "Telegram", "url": TELEGRAM})
    for scope in (ApiToken.Scope.READ, ApiToken.Scope.WRITE):
        _token, raw = api_token_create(user=owner, name=f"a {scope} token", scope=scope)
        headers = {"Authorization": f"Bearer {raw}"}
        response = api.client.get("/api/channels", headers=headers)
        assert response.status_code in (401, 403), (scope, response.content)
        assert SECRET not in response.content.decode()
        created = api.client.post(
            "/api/channels",
            data={"name": "Mine", "url": "json://127.0.0.1/h"},
            content_type="application/json",
            headers=headers,
        )
        assert created.status_code in (401, 403)
    assert Channel.objects.count() == 1


def test_a_backup_leaves_channels_out(api):
    api.post("/api/channels", {"name": "Telegram", "url": TELEGRAM})
    exported = b"".join(api.get("/api/backup/export").streaming_content).decode()
    assert "Telegram" not in exported and SECRET not in exported


def test_the_kinds_a_channel_may_get_are_listed_with_the_settings_page_s_words(api):
    kinds = api.get("/api/channels/kinds").json()
    assert {kind["kind"] for kind in kinds} == set(Notification.Kind.values)
    assert {"kind": "error", "label": "Failures"} in kinds
    assert Client().get("/api/channels/kinds").status_code in (401, 403)  # no session
