"""The whole path with real processes: celery beat ticks the dispatcher, a celery worker runs the
reminder and delivers it to the owner's channel (Apprise, to a webhook receiver on 127.0.0.1),
both on Redis, against this test's PostgreSQL database."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection
from django.utils import timezone
from django_celery_beat.models import PeriodicTask

from automations.models import Automation, AutomationRun
from automations.services.crud import automation_create
from talorys.notifications.channels import channel_create
from talorys.notifications.models import ChannelDelivery, Notification
from tests.waiting import wait_for

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.subprocess]


def database_url() -> str:
    db = connection.settings_dict
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    return f"postgres://{db['USER']}{password}@{db['HOST']}:{db['PORT']}/{db['NAME']}"


def celery(*args: str, env: dict[str, str], log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", *args],
        cwd=settings.BASE_DIR,
        env=env,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
    )


@pytest.mark.django_db(transaction=True)
def test_a_reminder_fires_through_real_beat_and_worker(
    needs_postgres, redis_url_for_tests, tmp_path, webhook
):
    env = os.environ | {
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": database_url(),
        "REDIS_URL": redis_url_for_tests,
        "TALORYS_DATA_DIR": str(tmp_path),
        "TALORYS_DISPATCH_SECONDS": "1",
    }
    channel_create(name="Webhook", url=f"json://127.0.0.1:{webhook.port}/hook")
    at = timezone.now() + dt.timedelta(seconds=4)
    automation = automation_create(
        name="Call Sam",
        kind="reminder",
        message="About Friday",
        schedule={"type": "once", "at": at.isoformat()},
    )
    processes = [
        celery("worker", "-l", "info", "--concurrency", "2", env=env, log=tmp_path / "worker.log"),
        celery(
            "beat",
            "-l",
            "info",
            "--pidfile",
            str(tmp_path / "beat.pid"),
            "-s",
            str(tmp_path / "beat-schedule"),
            env=env,
            log=tmp_path / "beat.log",
        ),
    ]
    try:

        def fired() -> bool:
            assert all(p.poll() is None for p in processes), "a celery process died"
            return bool(webhook.received)

        wait_for(fired, "the reminder's message on the channel", interval=0.5)
        time.sleep(2)  # time for any duplicate to show up
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        logs = {name: (tmp_path / f"{name}.log").read_text()[-3000:] for name in ("worker", "beat")}

    notifications = Notification.objects.filter(source=f"automation:{automation.pk}")
    assert notifications.count() == 1, logs
    notification = notifications.get()
    assert (notification.title, notification.body, notification.kind) == (
        "Call Sam",
        "About Friday",
        "reminder",
    )
    run = AutomationRun.objects.get(automation=automation)
    assert run.status == "ok" and run.slot == at
    assert run.started_at >= at
    automation.refresh_from_db()
    assert (automation.enabled, automation.run_count) == (False, 1)
    # beat installed the dispatcher in the database scheduler (what the operator sees in admin).
    assert PeriodicTask.objects.filter(task="automations.tasks.dispatch_due").exists()
    assert Automation.objects.count() == 1
    # Delivered once to the channel, by the worker, with its receipt.
    assert webhook.messages() == ["About Friday"]
    assert list(ChannelDelivery.objects.values_list("status", "attempts")) == [("sent", 1)]
