"""Every date the owner, the model or an import gives lies in 1900..2200: outside it is a 422 (or
a tool error) that changes nothing, never an overflow later when the date is shown."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from agent.executor import ToolExecutor, ToolOutcome
from talorys.lib.errors import ValidationFailed
from talorys.lib.tools import ToolContext
from talorys.owner.services.settings import owner_settings_update
from talorys.providers.base import ToolCall
from talorys.workspace import services
from talorys.workspace.models import Task

FAR_FUTURE = "9999-12-31T23:00:00-05:00"  # past year 9999 in UTC: overflowed on 18cfbd7
FAR_PAST = "1800-01-01T09:00:00+00:00"
OUT_OF_RANGE = [FAR_FUTURE, "9999-12-31T09:00:00+00:00", "2200-01-01T00:00:00+00:00", FAR_PAST]


def call(tool: str, /, **arguments: Any) -> ToolOutcome:
    executor = ToolExecutor(ctx=ToolContext(mode="chat", source="chat"), max_tool_calls=12)
    return executor.execute(ToolCall(id="call-1", name=tool, arguments=arguments))


@pytest.fixture
def kiritimati(db):
    owner_settings_update(time_zone="Pacific/Kiritimati")  # UTC+14


@pytest.mark.parametrize("due_at", OUT_OF_RANGE)
def test_the_task_api_refuses_a_due_date_out_of_range(api, kiritimati, due_at):
    response = api.post("/api/tasks", {"title": "Someday", "due_at": due_at})
    assert response.status_code == 422, response.content
    assert not Task.objects.exists()
    task = api.post("/api/tasks", {"title": "Soon"}).json()
    assert api.patch(f"/api/tasks/{task['id']}", {"due_at": due_at}).status_code == 422
    assert Task.objects.get().due_at is None


@pytest.mark.parametrize("bound", ["due_before", "due_after"])
def test_the_task_list_refuses_a_filter_out_of_range(api, kiritimati, bound):
    assert api.get("/api/tasks", {bound: FAR_FUTURE}).status_code == 422
    assert api.get("/api/tasks", {bound: "2199-12-31T23:00:00+00:00"}).status_code == 200


def test_the_edge_of_the_range_is_accepted_and_shown_in_a_zone_ahead_of_utc(api, kiritimati):
    response = api.post("/api/tasks", {"title": "Late", "due_at": "2199-12-31T23:59:00+00:00"})
    assert response.status_code == 201, response.content
    listed = call("list_tasks")
    assert listed.ok and listed.result["tasks"][0]["due_at"] == "2200-01-01T13:59+14:00"


@pytest.mark.parametrize("due_at", OUT_OF_RANGE)
def test_the_task_tools_refuse_a_due_date_out_of_range(kiritimati, due_at):
    created = call("create_task", title="Someday", due_at=due_at)
    assert not created.ok and created.result["error"]["code"] == "INVALID_ARGUMENTS"
    assert "1900-01-01 and 2200-01-01" in created.result["error"]["message"]
    assert not Task.objects.exists()
    task = services.task_create(title="Soon")
    updated = call("update_task", task_id=task.pk, due_at=due_at)
    assert not updated.ok and updated.result["error"]["code"] == "INVALID_ARGUMENTS"
    listed = call("list_tasks", due_before=due_at)
    assert not listed.ok and listed.result["error"]["code"] == "INVALID_ARGUMENTS"
    task.refresh_from_db()
    assert task.due_at is None


def test_the_task_service_refuses_a_due_date_out_of_range(kiritimati):
    with pytest.raises(ValidationFailed, match="2200"):
        services.task_create(title="Someday", due_at=dt.datetime.fromisoformat(FAR_FUTURE))
    assert not Task.objects.exists()


def test_a_far_future_task_stored_before_the_bound_does_not_break_the_model_task_list(kiritimati):
    # A row written before dates were bounded (or by hand in the admin).
    Task.objects.create(title="End of time", due_at=dt.datetime(9999, 12, 31, 23, tzinfo=dt.UTC))
    listed = call("list_tasks")
    assert listed.ok, listed.result
    assert listed.result["tasks"][0]["due_at"].startswith("9999-12-31T23:00")


def test_an_offset_wider_than_the_database_holds_is_read_as_the_same_instant(api, needs_postgres):
    # ISO 8601 and Python take offsets up to 23:59, PostgreSQL up to 15:59: this filter was a 500
    # (schemathesis found it), and a date stored with such an offset the same.
    task = api.post("/api/tasks", {"title": "Ferry", "due_at": "2058-10-19T05:00:00Z"}).json()
    after = api.get("/api/tasks", {"due_after": "2058-10-19T07:25:00-22:09"})
    before = api.get("/api/tasks", {"due_after": "2058-10-18T06:00:00-22:09"})
    stored = api.post("/api/tasks", {"title": "Late", "due_at": "2058-10-19T07:25:00+23:30"})

    assert (after.status_code, after.json()["count"]) == (200, 0)
    assert [item["id"] for item in before.json()["items"]] == [task["id"]]
    assert stored.status_code == 201, stored.content
    assert Task.objects.get(pk=stored.json()["id"]).due_at == dt.datetime(
        2058, 10, 18, 7, 55, tzinfo=dt.UTC
    )
