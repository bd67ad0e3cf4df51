"""One run at a time per automation: a slot that comes while the previous run is still in
progress is skipped with a receipt that says so; a run whose worker died is reaped by its lease
and does not hold the next slot up. On PostgreSQL, with real threads and a stalling model."""

from __future__ import annotations

import datetime as dt
import threading
import time

import pytest
from django.db import connection
from django.utils import timezone

from automations.models import Automation, AutomationRun
from automations.services import runs
from automations.services.crud import automation_create
from automations.services.housekeeping import automation_runs_reap
from automations.services.runs import automation_run
from talorys.notifications.models import Notification
from tests.agent.fake_openai import Stall, chunk, events, text
from tests.agent.test_runner import use_fake
from tests.waiting import wait_for

pytestmark = pytest.mark.django_db(transaction=True)

DAILY = {"type": "daily", "time": "08:00"}


def prompt_automation() -> Automation:
    return automation_create(
        name="Morning plan", kind="agent_prompt", message="Plan my day", schedule=DAILY
    )


def run(automation: Automation, slot: dt.datetime) -> AutomationRun | None:
    return automation_run(automation_id=automation.pk, slot=slot, version=1)


def test_a_slot_while_the_previous_run_is_in_progress_is_skipped(needs_postgres, fake_openai):
    use_fake(fake_openai)
    # The first run's model call stalls until the second slot has been handled.
    release = threading.Event()
    fake_openai.script(
        events(chunk({"role": "assistant", "content": "Your day: "}), Stall(1.5)),
        text("second"),
    )
    automation = prompt_automation()
    first_slot = timezone.now().replace(microsecond=0)
    second_slot = first_slot + dt.timedelta(seconds=1)
    outcome: dict[str, AutomationRun | None | BaseException] = {}

    def slow() -> None:
        try:
            outcome["first"] = run(automation, first_slot)
        except BaseException as exc:  # shown by the main thread
            outcome["first"] = exc
        finally:
            release.set()
            connection.close()

    thread = threading.Thread(target=slow)
    thread.start()
    # The first run is inside its model call: receipt committed, status running.
    wait_for(lambda: len(fake_openai.requests) == 1, "the first run's model call", interval=0.02)
    assert AutomationRun.objects.get().status == "running"

    second = run(automation, second_slot)

    assert second is not None
    assert second.status == "skipped" and second.error == "skipped: previous run still in progress"
    assert len(fake_openai.requests) == 1  # the second slot never called the model
    thread.join(30)
    first = outcome["first"]
    assert isinstance(first, AutomationRun), first
    assert first.status == "ok" and first.result.startswith("Your day:")
    receipts = dict(AutomationRun.objects.values_list("slot", "status"))
    assert receipts == {first_slot: "ok", second_slot: "skipped"}
    # Exactly once per slot still: the skipped slot's task delivered again does nothing.
    assert run(automation, second_slot) is None
    # With the first run over, the next slot runs.
    third = run(automation, second_slot + dt.timedelta(seconds=1))
    assert third.status == "ok" and third.result == "second"


def test_a_run_whose_worker_died_is_reaped_by_its_lease_and_the_next_slot_runs(
    needs_postgres, fake_openai
):
    use_fake(fake_openai)
    fake_openai.script(text("Fresh plan"))
    automation = prompt_automation()
    now = timezone.now()
    # A worker started this run a minute ago and died: nobody renews its lease.
    dead = AutomationRun.objects.create(
        automation=automation,
        slot=now - dt.timedelta(minutes=1),
        started_at=now - dt.timedelta(minutes=1),
        lease_until=now - dt.timedelta(seconds=1),
    )

    nxt = run(automation, now)

    assert nxt.status == "ok" and nxt.result == "Fresh plan"
    dead.refresh_from_db()
    assert dead.status == "error" and dead.error.startswith("Interrupted")
    assert dead.finished_at is not None
    assert Notification.objects.filter(title="Interrupted: Morning plan").count() == 1


def test_housekeeping_reaps_a_lost_run_by_its_lease_not_by_its_age(needs_postgres):
    automation = prompt_automation()
    now = timezone.now()
    lost = AutomationRun.objects.create(
        automation=automation,
        slot=now - dt.timedelta(minutes=3),
        started_at=now - dt.timedelta(minutes=3),
        lease_until=now - dt.timedelta(seconds=5),
    )
    # Long-running but alive: its worker keeps renewing the lease.
    alive = AutomationRun.objects.create(
        automation=automation,
        slot=now - dt.timedelta(hours=2),
        started_at=now - dt.timedelta(hours=2),
        lease_until=now + dt.timedelta(minutes=1),
    )
    assert automation_runs_reap() == 1
    lost.refresh_from_db()
    alive.refresh_from_db()
    assert lost.status == "error" and alive.status == "running"
    assert automation_runs_reap() == 0  # once


def test_a_live_run_renews_its_lease_while_the_model_is_slow(
    needs_postgres, fake_openai, monkeypatch
):
    # Renew every 0.1 s, so a 3 s model call renews many times; 3 s, not 1 s: on a loaded machine
    # the watcher's thread once read the receipt only twice in a 1 s call, and saw one lease.
    monkeypatch.setattr(runs, "RUN_LEASE_RENEW", dt.timedelta(seconds=0.1))
    use_fake(fake_openai)
    fake_openai.script(events(chunk({"role": "assistant", "content": "ok"}), Stall(3)))
    automation = prompt_automation()
    slot = timezone.now()
    leases: list[dt.datetime] = []

    def watch() -> None:
        try:
            wait_for(
                lambda: len(fake_openai.requests) == 1, "the first run's model call", interval=0.02
            )
            receipt = AutomationRun.objects.get()
            while receipt.status == "running":
                leases.append(receipt.lease_until)
                time.sleep(0.05)
                receipt.refresh_from_db()
        finally:
            connection.close()

    watcher = threading.Thread(target=watch)
    watcher.start()
    assert run(automation, slot).status == "ok"
    watcher.join(10)
    assert len(set(leases)) >= 2, leases  # renewed, not just set at the start
