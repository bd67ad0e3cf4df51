"""A once schedule out of 1900..2200 is refused everywhere it can come in (API, tool, import),
with nothing created; the automation list never 500s on a date at the end of time."""

from __future__ import annotations

import pytest

from agent.executor import ToolExecutor
from automations.models import Automation
from automations.services.crud import automation_create
from talorys.lib.errors import ValidationFailed
from talorys.lib.tools import ToolContext
from talorys.providers.base import ToolCall

FAR_FUTURE = "9999-12-31T23:00:00-05:00"
OUT_OF_RANGE = [FAR_FUTURE, "9999-12-31T09:00:00+00:00", "1800-01-01T09:00:00+00:00"]


@pytest.fixture
def ahead_of_utc(owner_zone):
    owner_zone("Pacific/Kiritimati")  # UTC+14: 9999-12-31 there is past year 9999


@pytest.mark.parametrize("at", OUT_OF_RANGE)
def test_the_api_refuses_a_once_schedule_out_of_range_and_creates_nothing(api, ahead_of_utc, at):
    body = {"name": "Far", "kind": "reminder", "schedule": {"type": "once", "at": at}}
    response = api.post("/api/automations", body)
    assert response.status_code == 422, response.content
    assert "2200" in response.json()["error"]["message"]
    assert not Automation.objects.exists()
    assert api.get("/api/automations").status_code == 200

    daily = body | {"schedule": {"type": "daily", "time": "09:00"}}
    created = api.post("/api/automations", daily).json()
    response = api.patch(
        f"/api/automations/{created['id']}", {"schedule": {"type": "once", "at": at}}
    )
    assert response.status_code == 422
    assert Automation.objects.get().schedule == {"type": "daily", "time": "09:00"}


def test_the_last_date_in_range_is_listed_in_a_zone_ahead_of_utc(api, ahead_of_utc):
    body = {
        "name": "Late",
        "kind": "reminder",
        "schedule": {"type": "once", "at": "2199-12-31T23:00:00+00:00"},
    }
    response = api.post("/api/automations", body)
    assert response.status_code == 201, response.content
    listed = api.get("/api/automations")
    assert listed.status_code == 200
    [item] = listed.json()["items"]
    assert item["schedule_text"] == "once at 2200-01-01 13:00 (Pacific/Kiritimati)"
    assert item["next_run_at"] == "2199-12-31T23:00:00Z"


@pytest.mark.parametrize("at", OUT_OF_RANGE)
def test_the_tool_refuses_a_once_schedule_out_of_range(ahead_of_utc, at):
    executor = ToolExecutor(ctx=ToolContext(mode="chat", source="chat"), max_tool_calls=4)
    outcome = executor.execute(
        ToolCall(
            id="call-1",
            name="create_automation",
            arguments={"name": "Far", "schedule": {"type": "once", "at": at}},
        )
    )
    assert not outcome.ok and outcome.result["error"]["code"] == "INVALID_ARGUMENTS"
    assert "2200" in outcome.result["error"]["message"]
    assert not Automation.objects.exists()


@pytest.mark.parametrize("at", OUT_OF_RANGE)
def test_an_import_refuses_a_once_schedule_out_of_range(ahead_of_utc, at):
    with pytest.raises(ValidationFailed, match="2200"):
        automation_create(
            name="Far",
            kind="reminder",
            schedule={"type": "once", "at": at},
            origin=Automation.Origin.IMPORT,
        )
    assert not Automation.objects.exists()


def test_a_row_stored_before_the_bound_does_not_break_the_list(api, ahead_of_utc):
    # Written before dates were bounded (or by hand in the admin): listed, not a 500.
    Automation.objects.create(
        name="Far",
        kind="reminder",
        schedule={"type": "once", "at": "9999-12-31T23:00:00Z"},
        enabled=False,
    )
    response = api.get("/api/automations")
    assert response.status_code == 200, response.content
    assert response.json()["items"][0]["name"] == "Far"
