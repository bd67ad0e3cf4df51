"""The automation tools as the model uses them (through the executor), including the
destructive ones that wait for the owner's approval."""

from __future__ import annotations

import datetime as dt
from typing import Any

from agent.executor import ToolExecutor, ToolOutcome
from automations import tasks
from automations.models import Automation, AutomationRun
from automations.services.crud import automation_create, automation_update
from talorys.lib.tools import ToolContext, tools_for
from talorys.notifications.models import Notification, PushDelivery
from talorys.providers.base import ToolCall

UTC = dt.UTC
NOW = dt.datetime(2026, 3, 2, 8, 58, tzinfo=UTC)  # 09:58 in Paris

_ids = iter(range(1, 100_000))


def call(tool: str, mode: str = "chat", **arguments: Any) -> ToolOutcome:
    executor = ToolExecutor(
        ctx=ToolContext(mode=mode, source="chat" if mode == "chat" else "automation:1"),
        max_tool_calls=12,
    )
    return executor.execute(ToolCall(id=f"call-{next(_ids)}", name=tool, arguments=arguments))


def test_remind_me_to_call_sam_in_two_minutes(
    clock, api, owner_zone, push_service, browser, django_capture_on_commit_callbacks, eager
):
    """End to end: the model's create_automation call fires once, leaves a receipt
    and a notification, and pushes to the subscribed browser."""
    owner_zone("Europe/Paris")
    api.post("/api/push/subscriptions", browser.subscription(push_service.endpoint()))
    outcome = call(
        "create_automation",
        name="Call Sam",
        kind="reminder",
        message="Call Sam",
        schedule={"type": "once", "at": "2026-03-02T10:00:00+01:00"},
    )
    assert outcome.ok, outcome.result
    created = outcome.result["automation"]
    assert created["next_run_at"] == "2026-03-02T10:00+01:00"
    assert created["schedule"] == "once at 2026-03-02 10:00 (Europe/Paris)"
    assert Automation.objects.get().origin == "chat"

    for minutes in (1, 2, 3, 60):
        clock.move_to(NOW + dt.timedelta(minutes=minutes, seconds=1))
        with django_capture_on_commit_callbacks(execute=True):
            tasks.dispatch_and_enqueue()

    (run,) = AutomationRun.objects.all()
    assert run.status == "ok" and run.slot == dt.datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
    (notification,) = Notification.objects.all()
    assert (notification.title, notification.kind) == ("Call Sam", "reminder")
    (request,) = push_service.requests
    assert browser.decrypt(request.body)["title"] == "Call Sam"
    assert PushDelivery.objects.get().status == "sent"
    assert Automation.objects.get().enabled is False

    listed = call("list_automation_runs", automation_id=created["id"]).result
    assert listed["runs"] == [
        {
            "slot": "2026-03-02T10:00+01:00",
            "status": "ok",
            "result": "Reminded: Call Sam",
            "error": None,
        }
    ]


def test_pause_resume_and_list(clock, db):
    automation = automation_create(
        name="Plan", kind="task_digest", schedule={"type": "daily", "time": "07:00"}
    )
    paused = call("pause_automation", automation_id=automation.pk).result["automation"]
    assert paused["enabled"] is False and paused["next_run_at"] is None
    assert call("list_automations", enabled=True).result == {
        "ok": True,
        "automations": [],
        "total": 0,
    }
    resumed = call("resume_automation", automation_id=automation.pk).result["automation"]
    assert resumed["enabled"] is True and resumed["next_run_at"] == "2026-03-03T07:00+00:00"
    assert call("list_automations").result["total"] == 1
    missing = call("pause_automation", automation_id=999)
    assert not missing.ok and missing.result["error"]["code"] == "NOT_FOUND"


def test_bad_tool_arguments_are_explained_and_create_nothing(clock, db):
    outcome = call("create_automation", name="x", schedule={"type": "daily", "time": "25:00"})
    assert not outcome.ok
    assert outcome.result["error"]["code"] == "INVALID_ARGUMENTS"
    assert "HH:MM" in outcome.result["error"]["message"]
    past = call(
        "create_automation", name="x", schedule={"type": "once", "at": "2020-01-01T09:00:00Z"}
    )
    assert not past.ok and "has passed" in past.result["error"]["message"]
    assert Automation.objects.count() == 0


def test_a_scheduled_run_sees_the_read_tools_only(db):
    scheduled = {tool.name for tool in tools_for("scheduled")}
    assert {"list_automations", "list_automation_runs"} <= scheduled
    assert not scheduled & {
        "create_automation",
        "pause_automation",
        "resume_automation",
        "delete_automation",
        "cancel_automation",
    }
    refused = call(
        "create_automation", mode="scheduled", name="x", schedule={"type": "daily", "time": "07:00"}
    )
    assert refused.result["error"]["code"] == "TOOL_NOT_ALLOWED"
    assert Automation.objects.count() == 0


def test_delete_waits_for_approval_then_can_be_undone(clock, api):
    automation = automation_create(
        name="Water plants", kind="reminder", schedule={"type": "daily", "time": "18:00"}
    )
    proposed = call("delete_automation", automation_id=automation.pk)
    assert proposed.result["status"] == "awaiting_owner_approval"
    assert "Water plants" in proposed.result["summary"]
    assert Automation.objects.live().count() == 1  # nothing changed yet

    action = proposed.result["action_id"]
    assert api.post(f"/api/approvals/{action}/approve").json()["status"] == "committed"
    assert api.get(f"/api/automations/{automation.pk}").status_code == 404
    assert call("list_automations").result["total"] == 0

    assert api.post(f"/api/approvals/{action}/undo").status_code == 200
    restored = api.get(f"/api/automations/{automation.pk}").json()
    assert restored["enabled"] and restored["next_run_at"] == "2026-03-02T18:00:00Z"


def test_an_automation_changed_after_the_proposal_is_not_deleted(clock, api):
    automation = automation_create(
        name="Stretch", kind="reminder", schedule={"type": "daily", "time": "18:00"}
    )
    action = call("delete_automation", automation_id=automation.pk).result["action_id"]
    automation_update(automation_id=automation.pk, schedule={"type": "daily", "time": "19:00"})
    decided = api.post(f"/api/approvals/{action}/approve").json()
    assert decided["status"] == "failed" and "changed after it was proposed" in decided["error"]
    assert Automation.objects.live().count() == 1


def test_cancel_stops_it_for_good_after_approval(clock, api):
    automation = automation_create(
        name="Digest", kind="task_digest", schedule={"type": "daily", "time": "07:00"}
    )
    action = call("cancel_automation", automation_id=automation.pk).result["action_id"]
    assert Automation.objects.get().enabled  # until the owner approves
    api.post(f"/api/approvals/{action}/approve")
    cancelled = api.get(f"/api/automations/{automation.pk}").json()
    assert cancelled["cancelled_at"] and not cancelled["enabled"]
    refused = api.post(f"/api/automations/{automation.pk}/resume")
    assert refused.status_code == 409
    again = call("cancel_automation", automation_id=automation.pk)
    assert again.result["error"]["code"] == "CONFLICT"
