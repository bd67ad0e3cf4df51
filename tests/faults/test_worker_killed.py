"""A Celery worker killed (SIGKILL) in the middle of an automation run: the
receipt says the run was interrupted, the owner is told, and the slot is never run a second time
(the dispatch a restarted worker runs first claims nothing).

Real processes: a Celery worker on Redis and this test's PostgreSQL database; the model is the
fake server, stalled mid-answer so the kill lands inside the run. The receipt's lease
(RUN_LEASE, two minutes) is moved into the past instead of waited for.
"""

from __future__ import annotations

import datetime as dt
import os

import pytest
from django.utils import timezone

from automations import tasks
from automations.models import Automation, AutomationRun
from automations.services.crud import automation_create
from automations.services.housekeeping import INTERRUPTED_ERROR
from talorys.notifications.models import Notification
from tests.agent.fake_openai import Stall, chunk, events
from tests.agent.test_runner import use_fake
from tests.faults.postgres import database_url
from tests.ops.running import celery_process, kill
from tests.waiting import wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres, pytest.mark.redis]


def test_a_killed_worker_leaves_an_interrupted_receipt_and_no_second_run(
    needs_postgres, redis_url_for_tests, fake_openai, tmp_path
):
    use_fake(fake_openai)  # the owner's settings, read by the worker from the database
    fake_openai.script(events(chunk({"content": "Thinking"}), Stall(60)))
    automation = automation_create(
        name="Routine",
        kind="agent_prompt",
        message="Think",
        schedule={"type": "once", "at": (timezone.now() + dt.timedelta(days=1)).isoformat()},
    )
    # Due now: the worker's start-up dispatch claims it (no beat needed).
    slot = timezone.now() - dt.timedelta(seconds=1)
    Automation.objects.filter(pk=automation.pk).update(next_run_at=slot)
    env = os.environ | {
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": database_url(),
        "REDIS_URL": redis_url_for_tests,
        "TALORYS_DATA_DIR": str(tmp_path),
    }

    first = celery_process(env, tmp_path / "first.log")
    try:
        wait_for(lambda: fake_openai.requests, "the run's model call")
    finally:
        kill(first)
    run = AutomationRun.objects.get(automation=automation)
    assert run.status == "running"  # nobody left to say otherwise

    # Two minutes later, as far as the lease can tell; beat's housekeeping then closes it.
    AutomationRun.objects.filter(pk=run.pk).update(lease_until=timezone.now())
    assert tasks.housekeeping()["interrupted"] == 1

    # What the next worker does first at start (its catch-up dispatch), and beat every tick:
    # the slot was claimed once, so nothing is due again.
    assert tasks.dispatch_and_enqueue() == []

    run.refresh_from_db()
    assert (run.status, run.error) == ("error", INTERRUPTED_ERROR)
    assert AutomationRun.objects.filter(automation=automation).count() == 1
    assert len(fake_openai.requests) == 1  # the slot was never asked of the model again
    notification = Notification.objects.get(source=automation.source)
    assert (notification.title, notification.kind) == ("Interrupted: Routine", "error")
    automation.refresh_from_db()
    assert (automation.last_status, automation.last_error) == ("error", INTERRUPTED_ERROR)
