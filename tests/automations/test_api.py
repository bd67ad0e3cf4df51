"""The automations API: /api/automations, runs, pause, resume; bad input changes nothing."""

from __future__ import annotations

import datetime as dt

import pytest
import time_machine

from automations.models import Automation, AutomationRun

UTC = dt.UTC
NOW = dt.datetime(2026, 6, 1, 6, 0, tzinfo=UTC)


DAILY = {"type": "daily", "time": "09:00"}


def create(api, **fields):
    body = {"name": "Stretch", "kind": "reminder", "schedule": DAILY} | fields
    response = api.post("/api/automations", body)
    assert response.status_code == 201, response.content
    return response.json()


def test_create_list_get_patch_delete(api, clock, owner_zone):
    owner_zone("Europe/Paris")
    created = create(api, message="Five minutes")
    assert created | {"id": 0, "created_at": None, "updated_at": None} == {
        "id": 0,
        "name": "Stretch",
        "kind": "reminder",
        "message": "Five minutes",
        "schedule": {"type": "daily", "time": "09:00"},
        "schedule_text": "every day at 09:00 (Europe/Paris)",
        "enabled": True,
        "origin": "owner",
        "next_run_at": "2026-06-01T07:00:00Z",
        "run_count": 0,
        "last_run_at": None,
        "last_status": "",
        "last_result": "",
        "last_error": "",
        "cancelled_at": None,
        "created_at": None,
        "updated_at": None,
    }
    url = f"/api/automations/{created['id']}"
    assert api.get("/api/automations").json()["count"] == 1
    assert api.get(url).json()["name"] == "Stretch"

    patched = api.patch(url, {"schedule": {"type": "weekly", "days": ["sat"], "time": "10:30"}})
    assert patched.status_code == 200
    assert patched.json()["next_run_at"] == "2026-06-06T08:30:00Z"
    assert patched.json()["message"] == "Five minutes"

    assert api.delete(url).status_code == 204
    assert api.get(url).status_code == 404
    assert Automation.objects.live().count() == 0  # in the bin


def test_pause_resume_and_filters(api, clock):
    automation = create(api)
    url = f"/api/automations/{automation['id']}"
    paused = api.post(f"{url}/pause").json()
    assert (paused["enabled"], paused["next_run_at"]) == (False, None)
    assert api.get("/api/automations", {"enabled": "true"}).json()["count"] == 0
    resumed = api.post(f"{url}/resume").json()
    assert resumed["enabled"] and resumed["next_run_at"] == "2026-06-01T09:00:00Z"
    assert api.get("/api/automations", {"kind": "task_digest"}).json()["count"] == 0


def test_runs_are_listed_newest_first(api, clock):
    automation = create(api)
    row = Automation.objects.get(pk=automation["id"])
    for hour in (1, 2):
        AutomationRun.objects.create(
            automation=row,
            slot=NOW - dt.timedelta(hours=hour),
            started_at=NOW,
            finished_at=NOW,
            status="ok",
            result=f"run {hour}",
        )
    runs = api.get(f"/api/automations/{row.pk}/runs").json()
    assert runs["count"] == 2
    assert [r["result"] for r in runs["items"]] == ["run 1", "run 2"]
    assert api.get("/api/automations/999/runs").status_code == 404


def test_a_one_time_automation_in_the_past_cannot_be_resumed(api, clock):
    automation = create(api, schedule={"type": "once", "at": "2026-06-01T08:30:00+02:00"})
    url = f"/api/automations/{automation['id']}"
    api.post(f"{url}/pause")
    with time_machine.travel(NOW + dt.timedelta(hours=1), tick=False):
        response = api.post(f"{url}/resume")
    assert response.status_code == 409
    assert "new schedule" in response.json()["error"]["message"]
    assert Automation.objects.get().enabled is False


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"schedule": {"type": "daily", "time": "9am"}}, "use 24-hour HH:MM"),
        ({"schedule": {"type": "fortnightly"}}, "schedule"),
        ({"schedule": {"type": "once", "at": "2026-05-01T09:00:00+02:00"}}, "has passed"),
        ({"schedule": {"type": "once", "at": "2026-07-01T09:00:00"}}, "timezone"),
        ({"kind": "agent_prompt", "message": "  "}, "message must not be empty"),
        ({"kind": "email"}, "kind"),
        ({"name": ""}, "name"),
        ({"owner": "someone"}, "owner"),
    ],
)
def test_bad_input_is_refused_clearly_and_creates_nothing(api, clock, body, message):
    response = api.post(
        "/api/automations", {"name": "x", "kind": "reminder", "schedule": DAILY} | body
    )
    assert response.status_code == 422, response.content
    error = response.json()["error"]
    assert error["code"] == "VALIDATION" and message in error["message"]
    assert Automation.objects.count() == 0


def test_a_bad_patch_changes_nothing(api, clock):
    automation = create(api)
    url = f"/api/automations/{automation['id']}"
    for body in (
        {"schedule": {"type": "cron", "expression": "every day"}},
        {"schedule": None},
        {"name": ""},
        {"enabled": False},
    ):
        response = api.patch(url, body)
        assert response.status_code == 422, (body, response.content)
    assert api.get(url).json() == automation


def test_automations_need_the_owner(anon_api):
    assert anon_api.get("/api/automations").status_code == 401
