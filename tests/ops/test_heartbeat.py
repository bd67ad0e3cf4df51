"""The heartbeats: the worker's is written by running the task beat sends, beat's as it sends it
(in the beat process only); both at start too."""

from __future__ import annotations

import datetime as dt

import pytest
from celery.signals import beat_init, before_task_publish
from django.utils import timezone

from talorys.ops import tasks
from talorys.ops.models import Heartbeat
from talorys.ops.selectors import heartbeat_states


def seen() -> dict[str, dt.datetime]:
    return dict(Heartbeat.objects.values_list("name", "at"))


@pytest.fixture
def not_beat(monkeypatch):
    """This test process is not beat; the flag beat_init sets is put back afterwards."""
    monkeypatch.setattr(tasks, "_in_beat", False)


def test_running_the_task_writes_the_workers_heartbeat(db, not_beat):
    before = timezone.now()

    tasks.heartbeat.apply().get()  # the task's own code, run as the worker would

    assert set(seen()) == {"worker"}
    assert seen()["worker"] >= before
    assert heartbeat_states()["worker"].status == "ok"
    assert heartbeat_states()["beat"].status == "unknown"


def test_the_schedule_sends_the_heartbeat_task(settings):
    entry = settings.CELERY_BEAT_SCHEDULE["ops-heartbeat"]
    assert entry["task"] == tasks.heartbeat.name
    assert entry["schedule"] == settings.TALORYS_HEARTBEAT_SECONDS


def test_beat_records_itself_at_start_and_each_time_it_sends(db, not_beat):
    beat_init.send(sender=None)
    first = seen()["beat"]

    before_task_publish.send(sender=tasks.heartbeat.name, body=(), headers={})

    assert seen()["beat"] > first
    assert "worker" not in seen()  # sending proves beat, not the worker


def test_beat_ignores_other_tasks(db, not_beat):
    beat_init.send(sender=None)
    first = seen()["beat"]

    before_task_publish.send(sender="talorys.history.tasks.purge_bin", body=(), headers={})

    assert seen()["beat"] == first


def test_sending_the_task_elsewhere_is_not_beat(db, not_beat):
    before_task_publish.send(sender=tasks.heartbeat.name, body=(), headers={})

    assert "beat" not in seen()
