"""POST /api/tasks/quick: a task typed in words, read by talorys/lib/when.py in the owner's zone,
with what was read in the answer; bad text is a 422 that adds nothing. The same phrases through
every other entry point: test_dates_everywhere.py."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest
import time_machine

from automations.models import Automation
from talorys.accounts.services import api_token_create
from talorys.owner.services.settings import owner_settings_update
from talorys.workspace.models import Task

TOKYO = ZoneInfo("Asia/Tokyo")
NOW = dt.datetime(2026, 12, 3, 23, 30, tzinfo=TOKYO)  # Thursday night in Tokyo, 14:30 UTC


@pytest.fixture
def tokyo(owner):
    owner_settings_update(time_zone="Asia/Tokyo")


def test_the_task_and_what_was_read(api, tokyo):
    with time_machine.travel(NOW, tick=False):
        response = api.post("/api/tasks/quick", {"text": " pick up parcel friday 5pm "})
    assert response.status_code == 201, response.content
    body = response.json()
    task = Task.objects.get()
    assert (task.title, task.due_at) == (
        "pick up parcel",
        dt.datetime(2026, 12, 4, 17, tzinfo=TOKYO),
    )
    assert body["id"] == task.pk
    assert body["title"] == "pick up parcel"
    assert dt.datetime.fromisoformat(body["due_at"]) == task.due_at
    assert body["read"] == {
        "title": "pick up parcel",
        "due_at": body["read"]["due_at"],
        "words": "friday 5pm",
        "said": "Due Fri 4 Dec, 17:00",
        "repeat": None,
    }
    assert dt.datetime.fromisoformat(body["read"]["due_at"]) == task.due_at


def test_words_without_a_date_add_the_task_undated(api, tokyo):
    body = api.post("/api/tasks/quick", {"text": "I may call Sam"}).json()
    assert (body["title"], body["due_at"]) == ("I may call Sam", None)
    assert body["read"] == {
        "title": "I may call Sam",
        "due_at": None,
        "words": "",
        "said": "",
        "repeat": None,
    }


def test_a_repeating_phrase_adds_a_repeating_task_due_at_its_next_occurrence(api, tokyo):
    with time_machine.travel(NOW, tick=False):
        response = api.post("/api/tasks/quick", {"text": "water plants every monday 8am"})
    assert response.status_code == 201, response.content
    body = response.json()
    task = Task.objects.get()
    assert task.title == "water plants"
    assert task.repeat == {"type": "weekly", "days": ["mon"], "time": "08:00"}
    assert task.due_at == dt.datetime(2026, 12, 7, 8, tzinfo=TOKYO)
    assert body["repeat"] == body["read"]["repeat"] == task.repeat
    assert body["read"]["said"] == "Every Monday at 08:00"
    assert not Automation.objects.exists()  # a task, not a reminder routine


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"text": ""}, "text"),
        ({"text": "   "}, "text"),
        ({"text": "x" * (Task.TITLE_MAX + 1)}, "text"),
        ({}, "text"),
        ({"text": "buy milk", "due_at": "2026-12-04T09:00:00Z"}, "due_at"),
        ({"text": "tomorrow 9am"}, "“tomorrow 9am” is only a date (due Fri 4 Dec, 09:00)"),
    ],
)
def test_bad_text_is_refused_and_adds_nothing(api, tokyo, body, message):
    with time_machine.travel(NOW, tick=False):
        response = api.post("/api/tasks/quick", body)
    assert response.status_code == 422, response.content
    error = response.json()["error"]
    assert error["code"] == "VALIDATION"
    assert message in error["message"] + str(error.get("details"))
    assert not Task.objects.exists()
    assert not Automation.objects.exists()


def test_a_write_token_may_add_and_a_read_token_may_not(anon_api, owner, tokyo):
    _token, reader = api_token_create(user=owner, name="phone", scope="read")
    refused = anon_api.post(
        "/api/tasks/quick", {"text": "call Ana"}, headers={"Authorization": f"Bearer {reader}"}
    )
    assert refused.status_code == 403
    assert not Task.objects.exists()
    _token, writer = api_token_create(user=owner, name="Shortcuts", scope="write")
    added = anon_api.post(
        "/api/tasks/quick", {"text": "call Ana"}, headers={"Authorization": f"Bearer {writer}"}
    )
    assert added.status_code == 201
    assert Task.objects.get().title == "call Ana"
    assert anon_api.post("/api/tasks/quick", {"text": "call Ana"}).status_code == 401


def test_the_route_is_in_the_openapi_document(api):
    spec = api.get("/api/openapi.json").json()
    operation = spec["paths"]["/api/tasks/quick"]["post"]
    assert {"201", "422", "401", "403"} <= set(operation["responses"])
    assert "TaskQuickOut" in str(operation["responses"]["201"])
    answer = spec["components"]["schemas"]["TaskQuickOut"]
    assert {"id", "title", "due_at", "read"} <= set(answer["properties"])
