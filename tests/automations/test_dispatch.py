"""The dispatcher and the run of a slot: each slot runs once, whatever is duplicated, raced,
delayed or missed."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest
import time_machine
from celery.signals import task_prerun, worker_ready
from django.utils import timezone

from automations import tasks
from automations.models import Automation, AutomationRun
from automations.services.crud import (
    automation_create,
    automation_pause,
    automation_resume,
    automation_update,
)
from automations.services.dispatch import Claim, automations_dispatch
from talorys.lib.errors import Conflict
from talorys.notifications.models import Notification
from tests.agent.test_runner import TURN_DATABASE
from tests.automations.conftest import in_threads

UTC = dt.UTC
PARIS = ZoneInfo("Europe/Paris")
START = dt.datetime(2026, 6, 1, 6, 0, tzinfo=UTC)  # a Monday, 08:00 in Paris


@pytest.fixture
def clock():
    with time_machine.travel(START, tick=False) as traveller:
        yield traveller


@pytest.fixture
def dispatch(django_capture_on_commit_callbacks, eager):
    """Run the dispatcher and, on its commit, the run tasks it enqueues (inline)."""

    def run_dispatch() -> list[Claim]:
        with django_capture_on_commit_callbacks(execute=True):
            return tasks.dispatch_and_enqueue()

    return run_dispatch


def reminder(schedule: dict, name: str = "Call Sam", **kwargs) -> Automation:
    return automation_create(name=name, kind="reminder", schedule=schedule, **kwargs)


def notifications(automation: Automation) -> list[Notification]:
    return list(Notification.objects.filter(source=f"automation:{automation.pk}").order_by("id"))


def test_a_due_reminder_fires_once_with_a_receipt_and_a_notification(
    db, clock, dispatch, owner_zone
):
    owner_zone("Europe/Paris")
    automation = reminder({"type": "daily", "time": "09:00"}, message="Ask about Friday")
    assert automation.next_run_at == dt.datetime(2026, 6, 1, 7, 0, tzinfo=UTC)

    assert dispatch() == []  # not yet due
    clock.move_to(dt.datetime(2026, 6, 1, 7, 0, 2, tzinfo=UTC))
    (claim,) = dispatch()
    assert claim.slot == dt.datetime(2026, 6, 1, 7, 0, tzinfo=UTC)

    (run,) = AutomationRun.objects.filter(automation=automation)
    assert (run.status, run.slot) == ("ok", claim.slot)
    (notification,) = notifications(automation)
    assert (notification.title, notification.body, notification.kind) == (
        "Call Sam",
        "Ask about Friday",
        "reminder",
    )
    assert run.notification == notification
    automation.refresh_from_db()
    assert automation.run_count == 1 and automation.last_status == "ok"
    assert automation.next_run_at == dt.datetime(2026, 6, 2, 7, 0, tzinfo=UTC)
    assert dispatch() == []  # the slot was advanced: nothing due twice
    assert AutomationRun.objects.count() == 1


def test_a_one_shot_runs_once_then_disables(db, clock, dispatch):
    automation = reminder({"type": "once", "at": (START + dt.timedelta(minutes=2)).isoformat()})
    clock.shift(dt.timedelta(minutes=2, seconds=1))
    assert len(dispatch()) == 1
    automation.refresh_from_db()
    assert (automation.enabled, automation.next_run_at) == (False, None)
    assert len(notifications(automation)) == 1
    clock.shift(dt.timedelta(days=1))
    assert dispatch() == []
    with pytest.raises(Conflict):
        automation_resume(automation_id=automation.pk)


def claim_one(clock, automation: Automation) -> Claim:
    """Move the clock to the automation's slot and claim it. The run task is not sent: the
    test's transaction never commits."""
    clock.move_to(automation.next_run_at + dt.timedelta(seconds=1))
    (claim,) = automations_dispatch()
    return claim


def deliver(claim: Claim) -> str | None:
    """What a worker does with the run task's message."""
    return tasks.run_automation(claim.automation_id, claim.slot.isoformat(), claim.version)


def test_a_duplicated_run_task_makes_one_receipt_and_one_notification(
    db, clock, django_capture_on_commit_callbacks
):
    automation = reminder({"type": "daily", "time": "12:00"})
    claim = claim_one(clock, automation)
    with django_capture_on_commit_callbacks(execute=True):
        assert deliver(claim) == "ok"
        assert deliver(claim) is None  # redelivered: the receipt exists
    assert AutomationRun.objects.filter(automation=automation).count() == 1
    assert len(notifications(automation)) == 1


@pytest.mark.django_db(transaction=True)
def test_duplicated_run_tasks_racing_on_postgres_make_one_receipt(needs_postgres, clock):
    automation = reminder({"type": "daily", "time": "12:00"})
    claim = claim_one(clock, automation)
    results = in_threads(*[lambda: deliver(claim)] * 4)
    assert sorted(results, key=str) == [None, None, None, "ok"]
    assert AutomationRun.objects.filter(automation=automation).count() == 1
    assert len(notifications(automation)) == 1


def test_a_run_queued_before_a_pause_or_reschedule_is_ignored(
    db, clock, django_capture_on_commit_callbacks
):
    paused = reminder({"type": "daily", "time": "12:00"}, name="paused")
    claim = claim_one(clock, paused)
    automation_pause(automation_id=paused.pk)
    assert deliver(claim) is None

    moved = reminder({"type": "daily", "time": "13:00"}, name="moved")
    claim = claim_one(clock, moved)
    automation_update(automation_id=moved.pk, schedule={"type": "daily", "time": "18:00"})
    assert deliver(claim) is None

    # Paused and resumed: still a different version, so the old slot does not run either.
    again = reminder({"type": "daily", "time": "14:00"}, name="again")
    claim = claim_one(clock, again)
    automation_pause(automation_id=again.pk)
    automation_resume(automation_id=again.pk)
    assert deliver(claim) is None

    assert AutomationRun.objects.count() == 0
    assert Notification.objects.count() == 0


def test_a_paused_automation_is_not_dispatched(db, clock, dispatch):
    automation = reminder({"type": "daily", "time": "09:00"})
    automation_pause(automation_id=automation.pk)
    clock.shift(dt.timedelta(days=2))
    assert dispatch() == []
    resumed = automation_resume(automation_id=automation.pk)
    # Resumed from now on: the days that passed while paused are not caught up.
    assert resumed.next_run_at > timezone.now()
    assert AutomationRun.objects.count() == 0


def test_missed_slots_within_24_hours_are_caught_up_once(db, clock, dispatch):
    hourly = reminder({"type": "cron", "expression": "0 * * * *"}, name="hourly")
    clock.shift(dt.timedelta(hours=5, minutes=30))  # the workers were down for five slots
    (claim,) = dispatch()
    assert claim.slot == START + dt.timedelta(hours=5)  # the latest missed slot, once
    assert len(notifications(hourly)) == 1
    hourly.refresh_from_db()
    assert hourly.next_run_at == START + dt.timedelta(hours=6)
    assert dispatch() == []
    assert AutomationRun.objects.filter(automation=hourly, status="skipped").count() == 0


def test_a_slot_missed_by_more_than_24_hours_is_skipped_recorded_and_rearmed(
    db, clock, dispatch, owner_zone
):
    owner_zone("Europe/Paris")
    weekly = reminder({"type": "weekly", "days": ["mon"], "time": "09:00"}, name="weekly")
    clock.shift(dt.timedelta(days=3, hours=2))  # Thursday: Monday's slot is 3 days old
    assert dispatch() == []  # nothing is run
    (run,) = AutomationRun.objects.filter(automation=weekly)
    assert run.status == "skipped" and run.slot == dt.datetime(2026, 6, 1, 7, 0, tzinfo=UTC)
    assert "more than 24 hours" in run.error
    (notification,) = notifications(weekly)
    assert notification.title == "Missed: weekly"
    assert "Mon 01 Jun 2026 09:00" in notification.body
    weekly.refresh_from_db()
    assert weekly.enabled and weekly.next_run_at == dt.datetime(2026, 6, 8, 7, 0, tzinfo=UTC)
    assert weekly.last_status == "skipped" and weekly.run_count == 0


def test_an_old_missed_slot_is_recorded_and_a_recent_one_still_runs(db, clock, dispatch):
    daily = reminder({"type": "daily", "time": "10:00"}, name="daily")  # owner zone: UTC
    clock.shift(dt.timedelta(days=3, hours=1))  # Thursday 07:00: slots Mon, Tue, Wed missed
    (claim,) = dispatch()
    assert claim.slot == dt.datetime(2026, 6, 3, 10, 0, tzinfo=UTC)  # Wednesday's, 21 h old
    statuses = dict(AutomationRun.objects.filter(automation=daily).values_list("slot", "status"))
    assert statuses == {
        dt.datetime(2026, 6, 1, 10, 0, tzinfo=UTC): "skipped",
        dt.datetime(2026, 6, 3, 10, 0, tzinfo=UTC): "ok",
    }
    daily.refresh_from_db()
    assert daily.next_run_at == dt.datetime(2026, 6, 4, 10, 0, tzinfo=UTC)


def test_a_one_shot_missed_by_more_than_24_hours_is_recorded_and_disabled(db, clock, dispatch):
    once = reminder({"type": "once", "at": (START + dt.timedelta(hours=1)).isoformat()})
    clock.shift(dt.timedelta(days=2))
    assert dispatch() == []
    once.refresh_from_db()
    assert (once.enabled, once.next_run_at) == (False, None)
    assert AutomationRun.objects.get(automation=once).status == "skipped"


def test_a_run_task_delivered_more_than_24_hours_late_is_skipped(db, clock):
    automation = reminder({"type": "daily", "time": "12:00"})
    claim = claim_one(clock, automation)
    clock.shift(dt.timedelta(hours=25))
    assert deliver(claim) == "skipped"
    (notification,) = notifications(automation)
    assert notification.title == "Missed: Call Sam" and "24 hours late" in notification.body


def test_a_starting_worker_catches_up_at_once(db, clock, eager, django_capture_on_commit_callbacks):
    automation = reminder({"type": "daily", "time": "09:00"})
    clock.shift(dt.timedelta(hours=3))  # everything was down at 09:00
    with django_capture_on_commit_callbacks(execute=True):
        worker_ready.send(sender=None)
    assert AutomationRun.objects.get(automation=automation).status == "ok"


def test_slots_follow_the_owner_when_the_time_zone_changes(db, clock, dispatch, owner_zone):
    owner_zone("Europe/Paris")
    automation = reminder({"type": "daily", "time": "09:00"})
    assert automation.next_run_at == dt.datetime(2026, 6, 1, 7, 0, tzinfo=UTC)
    owner_zone("Asia/Tokyo")
    dispatch()
    automation.refresh_from_db()
    assert automation.next_run_at == dt.datetime(2026, 6, 2, 0, 0, tzinfo=UTC)  # 09:00 in Tokyo


def test_a_hand_broken_schedule_is_paused_and_never_stops_the_others(
    db, clock, dispatch, owner_zone
):
    owner_zone("Europe/Paris")
    healthy = reminder({"type": "daily", "time": "09:00"}, name="Healthy")
    broken = reminder({"type": "daily", "time": "23:00"}, name="Broken")
    # The operator's admin accepts any JSON; a time zone change then re-arms both.
    Automation.objects.filter(pk=broken.pk).update(schedule={"type": "fortnightly"})
    owner_zone("Asia/Tokyo")

    clock.shift(dt.timedelta(hours=1, minutes=1))  # 09:01 in Paris: only Healthy is due
    dispatch()

    healthy.refresh_from_db()
    assert [n.title for n in notifications(healthy)] == ["Healthy"]
    assert healthy.next_run_at == dt.datetime(2026, 6, 2, 0, 0, tzinfo=UTC)  # 09:00 in Tokyo

    clock.shift(dt.timedelta(hours=15))  # past midnight in Paris: Broken's 23:00 slot is due
    dispatch()

    broken.refresh_from_db()
    assert not broken.enabled and broken.next_run_at is None
    assert broken.last_error.startswith("Paused: its schedule is invalid")
    assert notifications(broken) == []


@pytest.mark.django_db(transaction=True)
def test_two_dispatchers_racing_on_postgres_claim_each_slot_once(needs_postgres, eager):
    with time_machine.travel(START, tick=False) as clock:
        due = [
            reminder(
                {"type": "once", "at": (START + dt.timedelta(days=1)).isoformat()}, name=f"r{i}"
            )
            for i in range(150)
        ] + [reminder({"type": "daily", "time": "06:00"}, name=f"d{i}") for i in range(150)]
        clock.shift(dt.timedelta(days=1, minutes=1))

        first, second = in_threads(
            lambda: tasks.dispatch_and_enqueue(batch=20),
            lambda: tasks.dispatch_and_enqueue(batch=20),
        )
    claimed = [(c.automation_id, c.slot) for c in first + second]
    assert len(claimed) == len(set(claimed)) == 300
    assert first and second  # both took part, on disjoint rows
    assert {c.automation_id for c in first}.isdisjoint({c.automation_id for c in second})
    # Each claim ran exactly once (inline on commit): one receipt and one notification each.
    assert AutomationRun.objects.filter(status="ok").count() == 300
    assert Notification.objects.count() == 300
    assert not Automation.objects.filter(
        pk__in=[a.pk for a in due], next_run_at__lte=START + dt.timedelta(days=1, minutes=1)
    ).exists()


@TURN_DATABASE  # the prompt runs a turn: its trips see committed rows only
def test_reminders_due_together_run_in_chunks_each_once_and_a_prompt_alone(
    db, clock, eager, django_capture_on_commit_callbacks, monkeypatch
):
    """45 reminders and a model prompt due at one instant: the reminders go RUN_CHUNK (here 20)
    to a task (three tasks), the prompt in a task of its own; each reminder fires exactly once,
    and a redelivered chunk runs nothing again."""
    monkeypatch.setattr(tasks, "RUN_CHUNK", 20)  # 50 in use: 45 would make one chunk
    started: list[tuple[str, int]] = []

    def on_start(sender=None, args=None, **kwargs):
        chunk = len(args[0]) if sender.name == tasks.run_automations.name else 1
        started.append((sender.name, chunk))

    task_prerun.connect(on_start, weak=False)
    at = {"type": "once", "at": (START + dt.timedelta(minutes=1)).isoformat()}
    due = [reminder(at, name=f"Reminder {n}") for n in range(45)]
    prompt = automation_create(name="Think", kind="agent_prompt", message="Hi", schedule=at)
    Automation.objects.update(next_run_at=START)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            claims = tasks.dispatch_and_enqueue()
    finally:
        task_prerun.disconnect(on_start)

    assert len(claims) == 46
    chunks = sorted(n for name, n in started if name == tasks.run_automations.name)
    assert chunks == [5, 20, 20]
    assert [n for name, n in started if name == tasks.run_automation.name] == [1]
    for automation in due:
        assert len(notifications(automation)) == 1
        assert AutomationRun.objects.filter(automation=automation).count() == 1
    # The prompt ran on its own (with no model set its receipt says why; that is not tested here).
    assert AutomationRun.objects.filter(automation=prompt).count() == 1

    tasks.run_automations([(a.pk, START.isoformat(), a.version) for a in due[:20]])

    for automation in due[:20]:
        assert len(notifications(automation)) == 1
        assert AutomationRun.objects.filter(automation=automation).count() == 1
