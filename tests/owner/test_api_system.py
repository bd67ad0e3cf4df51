"""Owner settings, usage and unified search over the JSON API."""

from __future__ import annotations

import datetime as dt
import threading
import time

import pytest
from django.utils import timezone

from memory import services as memory_services
from talorys.owner.models import OwnerSettings, UsageDay
from talorys.owner.selectors import owner_settings_get
from talorys.owner.services.settings import owner_settings_update
from talorys.owner.services.usage import usage_record_tokens, usage_reserve
from talorys.workspace import services
from talorys.workspace.models import Task
from tests.waiting import HANG_SECONDS

SECRET = "sk-live-very-secret-value"


def settings_row() -> dict:
    return OwnerSettings.objects.values().get(pk=1)


# --- settings ----------------------------------------------------------------------------------


def test_settings_start_from_the_defaults_on_the_demo_provider(api, settings):
    settings.TALORYS_MODEL_BASE_URL = ""
    settings.TALORYS_MODEL = ""

    body = api.get("/api/settings").json()

    assert body["time_zone"] == "UTC"
    assert body["provider"] == "demo"
    # No embeddings server: the local embedder, in every install; semantic recall is on.
    assert body["embeddings_provider"] == "local" and body["semantic_enabled"] is True
    assert body["recall_mode"] == "hybrid"
    assert body["model_api_key_set"] is False
    assert body["daily_ai_requests"] == 200
    assert body["max_steps_per_turn"] == 6


def test_patch_settings_changes_only_what_is_sent(api):
    response = api.patch(
        "/api/settings",
        {
            "time_zone": "Europe/Paris",
            "max_steps_per_turn": 8,
            "quiet_hours_start": "22:00",
            "quiet_hours_end": "07:00",
        },
    )

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["time_zone"] == "Europe/Paris"
    assert body["max_steps_per_turn"] == 8
    assert body["quiet_hours_start"] == "22:00:00" and body["quiet_hours_end"] == "07:00:00"
    assert body["daily_ai_requests"] == 200
    assert api.get("/api/settings").json()["time_zone"] == "Europe/Paris"


def test_api_keys_are_write_only(api):
    response = api.patch(
        "/api/settings",
        {
            "model_base_url": "http://127.0.0.1:11434/v1",
            "model_name": "llama3.1",
            "model_api_key": SECRET,
            "embeddings_api_key": SECRET + "-emb",
        },
    )

    assert response.status_code == 200, response.content
    assert SECRET not in response.content.decode()
    body = response.json()
    assert body["model_api_key_set"] is True
    assert body["embeddings_api_key_set"] is True
    assert body["provider"] == "openai-compatible"
    assert "model_api_key" not in body
    assert "embeddings_api_key" not in body
    assert SECRET not in api.get("/api/settings").content.decode()
    assert settings_row()["model_api_key"] == SECRET

    cleared = api.patch("/api/settings", {"model_api_key": ""}).json()
    assert cleared["model_api_key_set"] is False
    assert cleared["embeddings_api_key_set"] is True
    assert settings_row()["model_api_key"] == ""


def test_provider_follows_the_environment_when_settings_are_empty(api, settings):
    settings.TALORYS_MODEL_BASE_URL = "http://127.0.0.1:11434/v1"
    settings.TALORYS_MODEL = ""
    assert api.get("/api/settings").json()["provider"] == "demo"  # a server but no model

    settings.TALORYS_MODEL = "llama3.1"
    assert api.get("/api/settings").json()["provider"] == "openai-compatible"


@pytest.mark.parametrize(
    "body",
    [
        {"time_zone": "Mars/Olympus_Mons"},
        {"time_zone": ""},
        {"time_zone": None},
        {"time_zone": "Mars/Olympus_Mons", "model_name": "llama3.1"},  # all or nothing
        {"max_steps_per_turn": 0},
        {"daily_ai_requests": -1},
        {"daily_ai_requests": None},
        {"model_base_url": "ftp://example.com"},
        {"model_base_url": "http://" + "x" * 600},
        {"quiet_hours_start": "25:00"},
        {"theme": "dark"},
    ],
)
def test_bad_settings_change_nothing(api, body):
    owner_settings_update(time_zone="Europe/Paris", model_name="before")
    before = settings_row()

    response = api.patch("/api/settings", body)

    assert response.status_code == 422, response.content
    assert response.json()["error"]["code"] == "VALIDATION"
    assert settings_row() == before


def test_bad_time_zone_message_names_the_problem(api):
    message = api.patch("/api/settings", {"time_zone": "Mars/Base"}).json()["error"]["message"]

    assert "Mars/Base" in message
    assert api.get("/api/settings").json()["time_zone"] == "UTC"


# A key goes into the Authorization header of every request to its server: a line break would
# start another header and a non-ASCII letter cannot be encoded (both broke every chat after).
BAD_KEYS = ["sk-abc\r\nX-Injected: 1", "sk-abc\ndef", "clé-secrète", "sk-\x01abc", "sk abc"]


@pytest.mark.parametrize("field", ["model_api_key", "embeddings_api_key"])
@pytest.mark.parametrize("key", BAD_KEYS)
def test_a_key_no_http_header_can_carry_is_refused_and_nothing_is_saved(api, field, key):
    owner_settings_update(model_api_key="sk-good", embeddings_api_key="sk-good-2")

    response = api.patch("/api/settings", {field: key, "model_name": "changed"})

    assert response.status_code == 422, response.content
    assert response.json()["error"] == {
        "code": "VALIDATION",
        "message": f"{field} can only contain printable ASCII characters without spaces or "
        "line breaks.",
        "details": {"field": field},
    }
    row = settings_row()
    assert (row["model_api_key"], row["embeddings_api_key"], row["model_name"]) == (
        "sk-good",
        "sk-good-2",
        "",
    )


def test_a_pasted_key_s_trailing_newline_is_trimmed_not_refused(api):
    assert api.patch("/api/settings", {"model_api_key": "sk-pasted\r\n"}).status_code == 200
    assert settings_row()["model_api_key"] == "sk-pasted"


def test_a_server_url_with_a_line_break_is_refused(api):
    owner_settings_get()
    response = api.patch("/api/settings", {"model_base_url": "http://models.example/\r\nv1"})

    assert response.status_code == 422
    assert "model_base_url must not contain" in response.json()["error"]["message"]
    assert settings_row()["model_base_url"] == ""


def test_settings_need_the_owner(anon_api):
    assert anon_api.get("/api/settings").status_code == 401
    assert anon_api.patch("/api/settings", {"time_zone": "Europe/Paris"}).status_code == 401
    assert not OwnerSettings.objects.filter(time_zone="Europe/Paris").exists()


# --- usage -------------------------------------------------------------------------------------


def test_usage_shows_today_against_the_limits(api):
    usage_reserve(kind="ai")
    usage_reserve(kind="ai")
    usage_reserve(kind="embedding", count=5)
    usage_record_tokens(input_tokens=120, output_tokens=30)

    body = api.get("/api/usage").json()

    assert body["today"]["day"] == timezone.now().date().isoformat()
    assert body["today"]["ai_requests"] == 2
    assert body["today"]["input_tokens"] == 120
    assert body["limits"] == {
        "ai_requests": 200,
        "scheduled_ai_requests": 50,
        "embedding_requests": 1000,
    }
    assert body["remaining"] == {
        "ai_requests": 198,
        "scheduled_ai_requests": 50,
        "embedding_requests": 995,
    }


def test_usage_remaining_follows_a_lowered_limit(api):
    for _ in range(3):
        usage_reserve(kind="scheduled_ai")
    api.patch("/api/settings", {"daily_scheduled_ai_requests": 2})

    body = api.get("/api/usage").json()

    assert body["limits"]["scheduled_ai_requests"] == 2
    assert body["remaining"]["scheduled_ai_requests"] == 0  # never negative


def test_usage_lists_the_last_30_days_newest_first(api):
    today = timezone.now().date()
    UsageDay.objects.create(day=today - dt.timedelta(days=3), ai_requests=7)
    UsageDay.objects.create(day=today - dt.timedelta(days=30), ai_requests=99)  # too old

    days = api.get("/api/usage").json()["days"]

    assert len(days) == 30
    assert days[0]["day"] == today.isoformat()
    assert days[-1]["day"] == (today - dt.timedelta(days=29)).isoformat()
    assert days[3]["ai_requests"] == 7
    assert sum(d["ai_requests"] for d in days) == 7


def test_reading_usage_writes_nothing(api):
    api.get("/api/usage")

    assert not UsageDay.objects.exists()


# --- search ------------------------------------------------------------------------------------


@pytest.fixture
def findable(db):
    return {
        "task": services.task_create(title="Buy basil seeds"),
        "note": services.note_create(title="Pesto", content="Basil, pine nuts, parmesan"),
        "project": services.project_create(name="Garden", description="Grow basil"),
        "memory": memory_services.memory_create_unchecked(text="Owner grows basil on the balcony"),
        "other": services.task_create(title="Pay rent"),
    }


def hits(response) -> set[tuple[str, int]]:
    assert response.status_code == 200, response.content
    return {(h["kind"], h["id"]) for h in response.json()["items"]}


def test_search_finds_every_kind(api, findable):
    found = hits(api.get("/api/search", {"q": "basil"}))

    assert found == {
        ("task", findable["task"].pk),
        ("note", findable["note"].pk),
        ("project", findable["project"].pk),
        ("memory", findable["memory"].pk),
    }


def test_search_limits_to_the_kinds_asked(api, findable):
    found = hits(api.get("/api/search", {"q": "basil", "kinds": "task,note"}))
    assert found == {("task", findable["task"].pk), ("note", findable["note"].pk)}

    only_memories = api.get("/api/search", {"q": "balcony", "kinds": "memory"}).json()
    assert only_memories["count"] == 1
    assert "balcony" in only_memories["items"][0]["snippet"]


def test_search_reads_the_former_plural_kinds_and_answers_with_the_one_name(api, findable):
    found = hits(api.get("/api/search", {"q": "basil", "kinds": "tasks,notes, memories"}))

    assert found == {
        ("task", findable["task"].pk),
        ("note", findable["note"].pk),
        ("memory", findable["memory"].pk),
    }


def test_search_skips_deleted_items(api, findable):
    Task.objects.filter(pk=findable["task"].pk).update(deleted_at=timezone.now())

    assert ("task", findable["task"].pk) not in hits(api.get("/api/search", {"q": "basil"}))


@pytest.mark.parametrize(
    "params",
    [
        {"q": "basil", "kinds": "tasks,recipes"},
        {"q": ""},
        {"q": "   "},
        {},
        {"q": "basil", "limit": 0},
        {"q": "bas\x00il"},
    ],
)
def test_bad_search_is_rejected(api, findable, params):
    response = api.get("/api/search", params)

    assert response.status_code == 422, response.content
    assert response.json()["error"]["code"] == "VALIDATION"


def test_unknown_kind_names_the_known_ones(api, findable):
    message = api.get("/api/search", {"q": "basil", "kinds": "recipes"}).json()["error"]["message"]

    assert "recipes" in message
    assert "memory" in message


def test_the_environment_key_is_never_sent_to_the_owner_server(db, settings):
    from talorys.owner.selectors import model_endpoint

    settings.TALORYS_MODEL_BASE_URL = "https://api.example.com/v1"
    settings.TALORYS_MODEL = "big-model"
    settings.TALORYS_MODEL_API_KEY = SECRET
    assert model_endpoint(owner_settings=owner_settings_get()).api_key == SECRET

    row = owner_settings_update(model_base_url="http://127.0.0.1:11434/v1")
    endpoint = model_endpoint(owner_settings=row)

    assert endpoint.base_url == "http://127.0.0.1:11434/v1"
    assert endpoint.model == "big-model"
    assert endpoint.api_key == ""


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_settings_patches_both_survive(needs_postgres):
    from django.db import connection, transaction

    owner_settings_get()
    locked = threading.Event()

    def slow_time_zone_change() -> None:
        try:
            with transaction.atomic():
                owner_settings_update(time_zone="Europe/Paris")
                locked.set()
                time.sleep(0.5)  # hold the row lock while the other patch starts
        finally:
            locked.set()
            connection.close()

    worker = threading.Thread(target=slow_time_zone_change)
    worker.start()
    assert locked.wait(HANG_SECONDS)
    owner_settings_update(model_name="llama3.1")
    worker.join(5)

    row = settings_row()
    assert (row["time_zone"], row["model_name"]) == ("Europe/Paris", "llama3.1")
