"""What a run produces: the reminder, the task digest, a scheduled prompt skipped for budget,
the bounded history, and interrupted runs."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from automations import tasks
from automations.models import Automation, AutomationRun
from automations.selectors import DIGEST_ITEMS
from automations.services.crud import automation_create
from automations.services.runs import MAX_RUNS_KEPT
from talorys.notifications.models import Notification
from talorys.owner.models import UsageDay
from talorys.owner.services.settings import owner_settings_update
from talorys.workspace import services as core_services
from tests.agent.test_runner import TURN_DATABASE

pytestmark = TURN_DATABASE  # a turn's trips see committed rows only

UTC = dt.UTC
NOW = dt.datetime(2026, 6, 10, 14, 0, tzinfo=UTC)  # Wednesday 23:00 in Tokyo


@pytest.fixture
def run_now(django_capture_on_commit_callbacks):
    """Deliver a run task for the automation's current version and the given slot."""

    def run(automation: Automation, slot: dt.datetime | None = None) -> AutomationRun | None:
        automation.refresh_from_db()
        with django_capture_on_commit_callbacks(execute=True):
            tasks.run_automation(
                automation.pk, (slot or timezone.now()).isoformat(), automation.version
            )
        return AutomationRun.objects.filter(automation=automation).order_by("-slot").first()

    return run


def create(kind: str, message: str = "", name: str = "Routine") -> Automation:
    return automation_create(
        name=name, kind=kind, message=message, schedule={"type": "daily", "time": "08:00"}
    )


def test_a_reminder_notifies_with_its_text(db, clock, run_now):
    run = run_now(create("reminder", message="Bring the cake", name="Party"))
    assert run.status == "ok" and run.result == "Reminded: Party"
    notification = run.notification
    assert (notification.title, notification.body, notification.kind) == (
        "Party",
        "Bring the cake",
        "reminder",
    )


def test_the_task_digest_lists_overdue_and_due_today_in_the_owner_time_zone(
    db, clock, run_now, owner_zone
):
    owner_zone("Asia/Tokyo")  # it is 23:00 on Wednesday there
    due = core_services.task_create
    due(title="Pay rent", due_at=NOW - dt.timedelta(days=2), priority=3)
    due(title="Call the bank", due_at=NOW - dt.timedelta(minutes=5))
    due(title="Water plants", due_at=NOW + dt.timedelta(minutes=30))  # 23:30 Tokyo, today
    due(title="Dentist", due_at=NOW + dt.timedelta(hours=2))  # 01:00 Tokyo, tomorrow
    due(title="Someday")
    done = due(title="Old and done", due_at=NOW - dt.timedelta(days=1))
    core_services.task_complete(task_id=done.pk)

    run = run_now(create("task_digest", message="Good evening!", name="Digest"))
    notification = run.notification
    assert notification.kind == "digest"
    assert notification.title == "Digest: 2 overdue, 1 due today"
    assert notification.body == (
        "Good evening!\n"
        "\n"
        "Overdue (2):\n"
        "- Pay rent — due Mon 08 Jun 23:00 (high priority)\n"
        "- Call the bank — due Wed 10 Jun 22:55\n"
        "\n"
        "Due today (1):\n"
        "- Water plants — due Wed 10 Jun 23:30"
    )
    assert run.result == notification.title


def test_an_empty_task_digest_says_so(db, clock, run_now):
    run = run_now(create("task_digest", name="Digest"))
    assert run.notification.title == "Digest: nothing due today"
    assert run.notification.body == "No open task is overdue or due today."


def test_a_long_digest_is_capped(db, clock, run_now):
    for i in range(25):
        core_services.task_create(title=f"Late {i}", due_at=NOW - dt.timedelta(hours=i + 1))
    body = run_now(create("task_digest", name="Digest")).notification.body
    assert body.count("\n- Late") == DIGEST_ITEMS
    assert body.endswith("- …and 5 more")


def test_a_scheduled_prompt_without_scheduled_budget_is_skipped_and_says_why(db, clock, run_now):
    owner_settings_update(daily_scheduled_ai_requests=0)
    automation = create("agent_prompt", message="Summarise my week", name="Weekly review")
    run = run_now(automation)
    assert run.status == "skipped"
    assert run.error == "Today's scheduled ai request budget is used up."
    notification = run.notification
    assert notification.title == "Skipped: Weekly review"
    assert "budget" in notification.body and "did not run" in notification.body
    automation.refresh_from_db()
    assert automation.last_status == "skipped" and automation.run_count == 0
    # Nothing was spent on it.
    assert not UsageDay.objects.filter(scheduled_ai_requests__gt=0).exists()


def test_a_scheduled_prompt_without_ordinary_budget_is_skipped_before_spending_any(
    db, clock, run_now
):
    owner_settings_update(daily_ai_requests=0)
    run = run_now(create("agent_prompt", message="Check my tasks"))
    assert run.status == "skipped" and "ai request budget" in run.error
    assert not UsageDay.objects.filter(scheduled_ai_requests__gt=0).exists()
    assert Notification.objects.get().title == "Skipped: Routine"


def test_a_scheduled_prompt_runs_on_the_model_and_notifies_its_reply(db, clock, run_now):
    """The model loop is the runner's (agent/runner/, tested there); here: its reply becomes
    the run's result and notification, and the budgets were spent by the runner, once each."""
    run = run_now(create("agent_prompt", message="Check my tasks", name="Task check"))
    assert run.status == "ok", run.error
    assert run.notification.title == "Task check" and run.notification.kind == "automation"
    assert run.notification.body == run.result and run.result
    usage = UsageDay.objects.get()
    assert usage.scheduled_ai_requests == usage.ai_requests >= 1


def test_history_is_bounded_to_the_latest_runs(db, clock, run_now):
    automation = create("reminder", name="Often")
    for minute in range(MAX_RUNS_KEPT + 5):
        run_now(automation, NOW - dt.timedelta(minutes=minute))
    runs = AutomationRun.objects.filter(automation=automation)
    assert runs.count() == MAX_RUNS_KEPT
    oldest_kept = NOW - dt.timedelta(minutes=MAX_RUNS_KEPT - 1)
    assert min(runs.values_list("slot", flat=True)) == oldest_kept
    automation.refresh_from_db()
    assert automation.run_count == MAX_RUNS_KEPT + 5


def test_a_run_interrupted_by_a_dead_worker_is_recorded_not_rerun(
    db, clock, django_capture_on_commit_callbacks
):
    automation = create("agent_prompt", message="Think")
    stuck = AutomationRun.objects.create(
        automation=automation,
        slot=NOW - dt.timedelta(hours=2),
        started_at=NOW - dt.timedelta(hours=2),
    )
    fresh = AutomationRun.objects.create(automation=automation, slot=NOW, started_at=NOW)
    with django_capture_on_commit_callbacks(execute=True):
        assert tasks.housekeeping()["interrupted"] == 1
    stuck.refresh_from_db()
    fresh.refresh_from_db()
    assert stuck.status == "error" and "Interrupted" in stuck.error
    assert fresh.status == "running"
    assert Notification.objects.get().title == "Interrupted: Routine"
