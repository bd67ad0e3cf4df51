"""/settings/: each section posts to the page through owner_settings_update (a bad value says
why and changes nothing), the provider keys are write-only, the API tokens are made once and
revoked; POST /api/settings/test-connection asks the model server one short question."""

from __future__ import annotations

import pytest
from django.test import Client

from talorys.accounts.models import ApiToken
from talorys.accounts.services import api_token_create
from talorys.owner.models import SETTINGS_BOUNDS, OwnerSettings, UsageDay
from talorys.owner.selectors import owner_settings_get
from talorys.owner.services.settings import owner_settings_update
from tests.agent.fake_openai import error, text
from tests.agent.test_chat_api import read_events
from tests.agent.test_runner import TURN_DATABASE


def post(client: Client, section: str, **fields):
    return client.post("/settings/", {"section": section, **fields}, follow=True)


def settings_row() -> OwnerSettings:
    return owner_settings_get()


# --- time zone ----------------------------------------------------------------------------------


def test_the_time_zone_is_a_choice_of_every_zone_and_saving_it_confirms_it(signed_in):
    body = signed_in.get("/settings/").content.decode()
    assert '<option value="Europe/Paris">' in body and '<option value="UTC" selected>' in body
    assert "(not chosen yet)" in body
    assert not settings_row().time_zone_confirmed

    page = post(signed_in, "time_zone", time_zone="Europe/Paris")

    assert "Time zone saved." in page.content.decode()
    row = settings_row()
    assert (row.time_zone, row.time_zone_confirmed) == ("Europe/Paris", True)
    assert 'data-time-zone="Europe/Paris"' in page.content.decode()  # the header follows


def test_a_bad_time_zone_is_refused_and_nothing_changes(signed_in):
    owner_settings_update(time_zone="Asia/Tokyo")

    page = post(signed_in, "time_zone", time_zone="Mars/Olympus_Mons")

    assert "Unknown time zone" in page.content.decode()
    assert settings_row().time_zone == "Asia/Tokyo"


def test_the_first_run_sets_the_browser_zone_through_the_api_and_confirms_it(api):
    assert api.get("/api/settings").json()["time_zone_confirmed"] is False
    body = api.patch("/api/settings", {"time_zone": "America/Chicago"}).json()
    assert (body["time_zone"], body["time_zone_confirmed"]) == ("America/Chicago", True)
    # Another setting leaves the flag as it is; it cannot be set on its own.
    assert api.patch("/api/settings", {"time_zone_confirmed": False}).status_code == 422
    assert settings_row().time_zone_confirmed


# --- model provider, embeddings -----------------------------------------------------------------


def test_the_model_key_is_write_only_kept_when_blank_and_removed_on_request(signed_in):
    post(
        signed_in,
        "model",
        model_base_url="https://models.example/v1",
        model_name="llama3.1",
        model_api_key="sk-secret-1",
    )
    body = signed_in.get("/settings/").content.decode()
    assert "sk-secret-1" not in body
    assert 'id="model-key-state">set<' in body

    post(signed_in, "model", model_base_url="https://models.example/v1", model_name="llama3.2")
    row = settings_row()
    assert (row.model_name, row.model_api_key) == ("llama3.2", "sk-secret-1")

    post(
        signed_in,
        "model",
        model_base_url="https://models.example/v1",
        model_name="llama3.2",
        model_api_key_remove="1",
    )
    assert settings_row().model_api_key == ""
    assert 'id="model-key-state">not set<' in signed_in.get("/settings/").content.decode()


def test_a_model_url_that_is_not_http_is_refused_whole(signed_in):
    page = post(signed_in, "model", model_base_url="ftp://models.example", model_name="llama3.1")

    assert "Server URL must start with http:// or https://" in page.content.decode()
    row = settings_row()
    assert (row.model_base_url, row.model_name) == ("", "")


@pytest.mark.parametrize(
    ("section", "field", "label"),
    [
        ("model", "model_api_key", "API key"),
        ("embeddings", "embeddings_api_key", "Embeddings API key"),
    ],
)
def test_a_key_with_a_line_break_or_an_accent_is_refused_by_its_label(
    signed_in, section, field, label
):
    owner_settings_update(model_api_key="sk-good", embeddings_api_key="sk-good-2")

    for key in ("sk-abc\r\nX-Injected: 1", "clé"):
        page = post(signed_in, section, model_name="changed", **{field: key})

        said = f"{label} can only contain printable ASCII characters without spaces or line breaks."
        assert said in page.content.decode()
    row = settings_row()
    assert (row.model_api_key, row.embeddings_api_key, row.model_name) == (
        "sk-good",
        "sk-good-2",
        "",
    )


def test_embeddings_and_semantic_recall_are_saved_with_the_checkbox(signed_in):
    post(
        signed_in,
        "embeddings",
        semantic_enabled="1",
        embeddings_base_url="http://127.0.0.1:11434/v1",
        embeddings_model="nomic-embed-text",
    )
    row = settings_row()
    assert (row.semantic_enabled, row.embeddings_model) == (True, "nomic-embed-text")
    assert "a server (OpenAI-compatible)" in signed_in.get("/settings/").content.decode()

    post(signed_in, "embeddings", embeddings_base_url="", embeddings_model="")
    assert settings_row().semantic_enabled is False


def test_this_model_sees_images_is_off_by_default_and_saved_with_the_model(signed_in):
    assert settings_row().model_sees_images is False
    base = {"model_base_url": "http://127.0.0.1:11434/v1", "model_name": "llava"}

    post(signed_in, "model", model_sees_images="1", **base)
    assert settings_row().model_sees_images is True
    assert 'name="model_sees_images" id="model-sees-images" value="1" checked' in (
        signed_in.get("/settings/").content.decode()
    )

    post(signed_in, "model", **base)  # the box left unticked
    assert settings_row().model_sees_images is False


# --- limits, quiet hours ------------------------------------------------------------------------


def test_limits_are_saved_within_the_model_s_bounds(signed_in):
    body = signed_in.get("/settings/").content.decode()
    assert (
        'name="max_steps_per_turn" id="limit-max_steps_per_turn" value="6" min="1" max="50"' in body
    )
    limits = {
        "daily_ai_requests": "300",
        "daily_scheduled_ai_requests": "20",
        "daily_embedding_requests": "500",
        "max_steps_per_turn": "8",
        "max_tool_calls_per_turn": "10",
        "max_output_tokens": "2048",
        "max_context_tokens": "16000",
    }

    post(signed_in, "limits", **limits)

    row = settings_row()
    assert {name: str(getattr(row, name)) for name in limits} == limits


@pytest.mark.parametrize(
    ("name", "value", "said"),
    [
        ("daily_ai_requests", "-5", "Chat requests a day must be between 0 and 1000000"),
        ("max_steps_per_turn", "0", "Model steps per reply must be between 1 and 50"),
        ("max_output_tokens", "many", "“many” is not a whole number"),
        ("max_context_tokens", "", "Context tokens is empty: give a whole number."),
    ],
)
def test_a_bad_limit_says_why_and_changes_no_limit(signed_in, name, value, said):
    before = {field: getattr(settings_row(), field) for field in SETTINGS_BOUNDS}
    limits = {field: str(v + 1) for field, v in before.items()} | {name: value}

    page = post(signed_in, "limits", **limits)

    assert said in page.content.decode()
    assert {field: getattr(settings_row(), field) for field in SETTINGS_BOUNDS} == before


def test_quiet_hours_are_set_and_cleared(signed_in):
    post(signed_in, "quiet_hours", quiet_hours_start="22:00", quiet_hours_end="07:30")
    row = settings_row()
    assert (str(row.quiet_hours_start), str(row.quiet_hours_end)) == ("22:00:00", "07:30:00")
    assert 'value="22:00"' in signed_in.get("/settings/").content.decode()

    page = post(signed_in, "quiet_hours", quiet_hours_start="25:99", quiet_hours_end="")
    assert "not a time like 22:00" in page.content.decode()
    assert str(settings_row().quiet_hours_start) == "22:00:00"

    post(signed_in, "quiet_hours", quiet_hours_start="", quiet_hours_end="")
    row = settings_row()
    assert (row.quiet_hours_start, row.quiet_hours_end) == (None, None)


def test_the_push_section_has_its_button(signed_in):
    assert 'id="settings-push-toggle"' in signed_in.get("/settings/").content.decode()


# --- API tokens ---------------------------------------------------------------------------------


def test_a_new_token_is_shown_once_and_works_then_revoked_it_is_refused(signed_in, owner):
    page = post(signed_in, "token_create", name="backup script", scope="write")
    body = page.content.decode()
    token = ApiToken.objects.get()
    secret = body.split('id="new-token-secret">')[1].split("<")[0]
    assert secret.startswith(token.prefix) and token.scope == "write"
    assert secret not in signed_in.get("/settings/").content.decode()  # once
    bearer = {"Authorization": f"Bearer {secret}"}
    assert Client().get("/api/tasks", headers=bearer).status_code == 200
    assert "never used" not in signed_in.get("/settings/").content.decode()

    post(signed_in, "token_revoke", token_id=token.pk)

    assert Client().get("/api/tasks", headers=bearer).status_code == 401
    assert ">revoked<" in signed_in.get("/settings/").content.decode()


@pytest.mark.parametrize(
    ("fields", "said"),
    [
        ({"section": "token_create", "name": "", "scope": "read"}, "A token needs a name."),
        ({"section": "token_create", "name": "x", "scope": "admin"}, "scope is one of"),
        ({"section": "token_revoke", "token_id": "999999"}, "No such token."),
        ({"section": "token_revoke", "token_id": "abc"}, "is not an id"),
        ({"section": "nonsense"}, "Unknown settings section."),
    ],
)
def test_bad_token_input_says_why_and_changes_nothing(signed_in, owner, fields, said):
    kept, _raw = api_token_create(user=owner, name="kept")

    page = signed_in.post("/settings/", fields, follow=True)

    assert said in page.content.decode()
    assert list(ApiToken.objects.values_list("name", "revoked_at")) == [("kept", None)]
    assert kept.pk


def test_the_page_is_the_owner_s_only(client, db):
    assert client.get("/settings/").status_code == 302
    assert (
        post(client, "time_zone", time_zone="Europe/Paris")
        .redirect_chain[-1][0]
        .startswith("/login/")
    )
    assert settings_row().time_zone == "UTC"


# --- Test connection ----------------------------------------------------------------------------


def test_test_connection_asks_the_submitted_server_and_shows_its_reply(api, fake_openai):
    fake_openai.script(text("OK"))

    answer = api.post(
        "/api/settings/test-connection",
        {"base_url": fake_openai.base_url, "model": "fake-model", "api_key": "sk-typed"},
    ).json()

    assert answer["ok"] is True and answer["reply"] == "OK"
    assert answer["model"] == "fake-model"
    assert fake_openai.requests[0]["model"] == "fake-model"
    assert "tools" not in fake_openai.requests[0]
    assert fake_openai.headers[0]["Authorization"] == "Bearer sk-typed"
    assert settings_row().model_base_url == ""  # tested, not saved
    assert UsageDay.objects.get().ai_requests == 1  # one request of the day's budget


def test_test_connection_uses_the_stored_key_only_for_its_own_server(api, fake_openai):
    owner_settings_update(
        model_base_url=fake_openai.base_url, model_name="stored", model_api_key="sk-stored"
    )
    fake_openai.script(text("OK"), text("OK"))

    assert api.post("/api/settings/test-connection", {}).json()["ok"] is True
    other = fake_openai.base_url.replace("127.0.0.1", "localhost")
    assert api.post("/api/settings/test-connection", {"base_url": other}).json()["ok"] is True

    assert fake_openai.headers[0]["Authorization"] == "Bearer sk-stored"
    assert "Authorization" not in fake_openai.headers[1]  # another server: never the key
    assert [r["model"] for r in fake_openai.requests] == ["stored", "stored"]


def test_test_connection_reports_the_provider_error(api, fake_openai):
    fake_openai.script(error(401, "invalid api key"))

    answer = api.post(
        "/api/settings/test-connection", {"base_url": fake_openai.base_url, "model": "m"}
    ).json()

    assert answer["ok"] is False
    assert (answer["kind"], answer["code"]) == ("auth", "PROVIDER_AUTH")
    assert "invalid api key" in answer["message"]


def test_test_connection_with_a_stored_key_no_header_can_carry_says_so(api, fake_openai):
    # Saved before the settings checked keys (an older install): written past the service.
    OwnerSettings.objects.filter(pk=owner_settings_get().pk).update(
        model_base_url=fake_openai.base_url, model_name="m", model_api_key="clé\r\nX-Injected: 1"
    )

    response = api.post("/api/settings/test-connection", {})

    assert response.status_code == 200, response.content
    answer = response.json()
    assert (answer["ok"], answer["kind"], answer["code"]) == (False, "auth", "PROVIDER_AUTH")
    assert "API key can only contain printable ASCII characters" in answer["message"]
    assert "enter it again in Settings" in answer["message"]
    assert fake_openai.requests == []
    assert not UsageDay.objects.exists()  # nothing was sent, nothing spent


@TURN_DATABASE  # a turn's trips see committed rows only
def test_a_chat_with_a_stored_key_no_header_can_carry_fails_with_that_reason(api, fake_openai):
    OwnerSettings.objects.filter(pk=owner_settings_get().pk).update(
        model_base_url=fake_openai.base_url, model_name="m", model_api_key="clé"
    )

    response = api.stream("/api/chat", {"text": "Hello"})

    assert response.status_code == 200
    stream = read_events(response)
    [failure] = [data for name, data in stream if name == "error"]
    assert failure["code"] == "PROVIDER_AUTH"
    assert "API key can only contain printable ASCII characters" in failure["message"]
    assert stream[-1][1]["status"] == "error"
    assert fake_openai.requests == []


def test_test_connection_with_nothing_set_says_the_demo_answers(api):
    answer = api.post("/api/settings/test-connection", {}).json()
    assert answer["ok"] is True and answer["provider"] == "demo"


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ({"base_url": "ftp://x.example", "model": "m"}, "must start with http"),
        ({"base_url": "http://127.0.0.1:9/v1"}, "Name the model"),
        ({"model": "m", "extra": 1}, "extra"),
        (
            {"base_url": "http://127.0.0.1:9/v1", "model": "m", "api_key": "sk\r\nX: 1"},
            "api_key can only contain printable ASCII characters",
        ),
        (
            {"base_url": "http://127.0.0.1:9/v1", "model": "m", "api_key": "clé"},
            "api_key can only contain printable ASCII characters",
        ),
    ],
)
def test_test_connection_refuses_bad_input(api, body, said):
    response = api.post("/api/settings/test-connection", body)
    assert response.status_code == 422
    assert said in response.json()["error"]["message"]
    assert not UsageDay.objects.exists()


def test_test_connection_takes_the_session_only(owner, fake_openai):
    _token, raw = api_token_create(user=owner, name="w", scope=ApiToken.Scope.WRITE)
    response = Client().post(
        "/api/settings/test-connection",
        {"base_url": fake_openai.base_url, "model": "m"},
        content_type="application/json",
        headers={"Authorization": f"Bearer {raw}"},
    )
    assert response.status_code == 401
    assert fake_openai.requests == []


def test_the_tokens_section_shows_the_mcp_url(signed_in):
    body = signed_in.get("/settings/").content.decode()
    assert "<code>http://testserver/mcp</code>" in body
    # Both client addresses, each with its copy button.
    assert 'data-copy="http://testserver/mcp"' in body
    assert 'data-copy="http://testserver/v1"' in body
    assert '<code id="v1-url-value">http://testserver/v1</code>' in body
    assert "talorys_mcp" in body and "TALORYS_MCP_TOKEN" in body
