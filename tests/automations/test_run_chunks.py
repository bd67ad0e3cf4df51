"""A chunk of reminders and digests runs in one transaction with bulk writes
(runs.automation_runs_together): each slot still runs once, with the outcome a run on its own
gives, and one bad row falls back to one at a time without costing the others anything."""

from __future__ import annotations

import datetime as dt
import logging

import pytest
import time_machine
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.db import connection
from django.test.utils import CaptureQueriesContext

from automations import tasks
from automations.models import Automation, AutomationRun
from automations.services.crud import automation_create, automation_pause
from automations.services.runs import MAX_RUNS_KEPT
from talorys.notifications import services as notify
from talorys.notifications.models import Notification, PushDelivery
from tests.agent.test_runner import TURN_DATABASE
from tests.automations.conftest import in_threads

UTC = dt.UTC
SLOT = dt.datetime(2026, 6, 1, 6, 0, tzinfo=UTC)


@pytest.fixture
def clock():
    with time_machine.travel(SLOT + dt.timedelta(seconds=3), tick=False) as traveller:
        yield traveller


def reminders(n: int, *, start: int = 0) -> list[Automation]:
    return [
        automation_create(
            name=f"Reminder {i}",
            kind="reminder",
            message=f"Text {i}",
            schedule={"type": "daily", "time": "06:00"},
        )
        for i in range(start, start + n)
    ]


def claims(automations: list[Automation], slot: dt.datetime = SLOT) -> list[tuple[int, str, int]]:
    return [(a.pk, slot.isoformat(), a.version) for a in automations]


def run_chunk(chunk: list[tuple[int, str, int]], capture) -> int:
    with capture(execute=True):
        return tasks.run_automations(chunk)


def counts(automation: Automation) -> tuple[int, int]:
    """(receipts, notifications) of the automation."""
    return (
        AutomationRun.objects.filter(automation=automation).count(),
        Notification.objects.filter(source=automation.source).count(),
    )


def test_a_chunk_gives_each_reminder_what_a_run_on_its_own_gives(
    db, clock, django_capture_on_commit_callbacks
):
    alone, *chunked = reminders(4)
    with django_capture_on_commit_callbacks(execute=True):
        tasks.run_automation(alone.pk, SLOT.isoformat(), alone.version)
    assert run_chunk(claims(chunked), django_capture_on_commit_callbacks) == 3

    def outcome(automation: Automation) -> tuple:
        automation.refresh_from_db()
        run = AutomationRun.objects.get(automation=automation)
        return (
            run.slot,
            run.status,
            run.result.replace(automation.name, "NAME"),
            run.error,
            run.started_at <= run.finished_at,
            run.notification.title.replace(automation.name, "NAME"),
            run.notification.kind,
            run.notification.body[:5],
            automation.run_count,
            automation.last_status,
            automation.last_result.replace(automation.name, "NAME"),
            automation.last_run_at == run.finished_at,
        )

    expected = outcome(alone)
    assert expected[:3] == (SLOT, "ok", "Reminded: NAME")
    for automation in chunked:
        assert outcome(automation) == expected


def test_a_chunk_takes_as_many_queries_for_many_reminders_as_for_few(
    db, clock, django_capture_on_commit_callbacks
):
    few, many = reminders(2), reminders(20, start=2)
    with CaptureQueriesContext(connection) as small:
        run_chunk(claims(few), django_capture_on_commit_callbacks)
    with CaptureQueriesContext(connection) as large:
        run_chunk(claims(many), django_capture_on_commit_callbacks)
    # 13: one of them reads which of the owner's channels take the reminders (none here).
    assert len(large) == len(small) <= 13
    assert all(counts(a) == (1, 1) for a in few + many)


def test_a_chunk_runs_a_slot_once_and_skips_what_is_stale_or_already_ran(
    db, clock, django_capture_on_commit_callbacks
):
    ran, paused, twice, fresh = reminders(4)
    run_chunk(claims([ran]), django_capture_on_commit_callbacks)
    chunk = claims([ran, paused, twice, twice, fresh])
    automation_pause(automation_id=paused.pk)  # the claim carries the version before the pause
    assert run_chunk(chunk, django_capture_on_commit_callbacks) == 5
    assert [counts(a) for a in (ran, paused, twice, fresh)] == [(1, 1), (0, 0), (1, 1), (1, 1)]
    twice.refresh_from_db()
    assert twice.run_count == 1
    run_chunk(chunk, django_capture_on_commit_callbacks)  # redelivered: nothing runs again
    assert Notification.objects.count() == 3


def test_two_slots_of_one_automation_in_a_chunk_both_run_and_both_count(
    db, clock, django_capture_on_commit_callbacks
):
    (automation,) = reminders(1)
    earlier = SLOT - dt.timedelta(hours=1)
    both = claims([automation], SLOT) + claims([automation], earlier)
    assert run_chunk(both, django_capture_on_commit_callbacks) == 2
    assert counts(automation) == (2, 2)
    automation.refresh_from_db()
    assert automation.run_count == 2 and automation.last_status == "ok"
    assert run_chunk(both, django_capture_on_commit_callbacks) == 2
    assert counts(automation) == (2, 2)


@TURN_DATABASE  # the prompt runs a turn: its trips see committed rows only
def test_a_prompt_and_a_day_late_slot_in_a_chunk_run_on_their_own_path(
    db, clock, django_capture_on_commit_callbacks
):
    (reminder,) = reminders(1)
    prompt = automation_create(
        name="Think", kind="agent_prompt", message="Hi", schedule={"type": "daily", "time": "06:00"}
    )
    late = claims([reminder], SLOT - dt.timedelta(hours=25))
    assert run_chunk(claims([prompt]) + late, django_capture_on_commit_callbacks) == 2
    (missed,) = AutomationRun.objects.filter(automation=reminder)
    assert missed.status == "skipped" and "24 hours late" in missed.notification.body
    assert AutomationRun.objects.filter(automation=prompt).count() == 1


def test_one_bad_row_falls_back_to_one_at_a_time_and_the_others_still_notify(
    db, clock, django_capture_on_commit_callbacks, caplog
):
    first, broken, last = reminders(3)
    digest = automation_create(
        name="Digest", kind="task_digest", schedule={"type": "daily", "time": "06:00"}
    )
    # The admin accepts any name: an empty one makes a notification without a title.
    Automation.objects.filter(pk=broken.pk).update(name="  ")
    with caplog.at_level(logging.INFO, logger="automations.tasks"):
        done = run_chunk(claims([first, broken, last, digest]), django_capture_on_commit_callbacks)
    assert done == 3
    assert "failed together" in caplog.text and "the run failed" in caplog.text
    assert [counts(a) for a in (first, broken, last, digest)] == [(1, 1), (0, 0), (1, 1), (1, 1)]
    assert Notification.objects.get(source=digest.source).kind == "digest"


def test_a_chunk_keeps_each_history_bounded_and_never_drops_a_run_in_progress(
    db, clock, django_capture_on_commit_callbacks
):
    full, short = reminders(2)
    for minutes in range(1, MAX_RUNS_KEPT + 1):
        slot = SLOT - dt.timedelta(minutes=minutes)
        status = "running" if minutes == MAX_RUNS_KEPT else "ok"
        AutomationRun.objects.create(
            automation=full,
            slot=slot,
            started_at=slot,
            status=status,
            finished_at=None if status == "running" else slot,
        )
    oldest = SLOT - dt.timedelta(days=3)
    AutomationRun.objects.create(
        automation=full, slot=oldest, started_at=oldest, finished_at=oldest, status="ok"
    )
    run_chunk(claims([full, short]), django_capture_on_commit_callbacks)
    kept = AutomationRun.objects.filter(automation=full)
    # The latest MAX_RUNS_KEPT, and the old one still running; the oldest finished one is gone.
    assert kept.count() == MAX_RUNS_KEPT + 1
    assert kept.filter(status="running").count() == 1
    assert not kept.filter(slot=oldest).exists()
    assert counts(short) == (1, 1)


def test_a_chunk_pushes_each_notification_to_each_browser(
    db, clock, api, push_service, browser, eager, django_capture_on_commit_callbacks
):
    response = api.post("/api/push/subscriptions", browser.subscription(push_service.endpoint()))
    assert response.status_code == 201, response.content
    due = reminders(3)
    run_chunk(claims(due), django_capture_on_commit_callbacks)
    assert PushDelivery.objects.filter(status="sent").count() == 3
    titles = sorted(browser.decrypt(r.body)["title"] for r in push_service.requests)
    assert titles == [a.name for a in due]


@pytest.mark.django_db(transaction=True)
def test_chunks_with_overlapping_claims_racing_on_postgres_run_each_slot_once(
    needs_postgres, clock
):
    due = reminders(45)
    single = due[20]
    results = in_threads(
        lambda: tasks.run_automations(claims(due[:30])),
        lambda: tasks.run_automations(claims(due[15:])),
        lambda: tasks.run_automation(single.pk, SLOT.isoformat(), single.version),
    )
    assert results[:2] == [30, 30]
    assert all(counts(a) == (1, 1) for a in due)
    assert sum(Automation.objects.values_list("run_count", flat=True)) == 45


@pytest.mark.django_db(transaction=True)
async def test_a_chunk_broadcasts_each_notification_once_committed():
    layer = get_channel_layer()
    channel = await layer.new_channel()
    await layer.group_add(notify.NOTIFICATIONS_GROUP, channel)
    drafts = [
        notify.Draft(f"Reminder {i}", kind="reminder", source="automation:1") for i in range(3)
    ]

    def send() -> list[Notification]:
        try:
            return notify.notifications_send(drafts)
        finally:
            connection.close()  # the worker thread's own connection

    made = await sync_to_async(send)()
    received = [(await layer.receive(channel))["notification"] for _ in drafts]
    assert [n["id"] for n in received] == [n.pk for n in made]
    assert [n["title"] for n in received] == ["Reminder 0", "Reminder 1", "Reminder 2"]
    await layer.group_discard(notify.NOTIFICATIONS_GROUP, channel)
