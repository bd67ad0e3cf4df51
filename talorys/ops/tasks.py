"""The heartbeats: beat sends `heartbeat` every TALORYS_HEARTBEAT_SECONDS and the worker runs it.

The worker's heartbeat is written by the task, so a fresh one proves beat, the broker and a
worker all work; beat's own is written where beat sends it (before_task_publish, in the beat
process only), so a stopped worker does not hide a live beat. Both are also written at start,
so a health check right after start-up does not wait a whole interval.
"""

from __future__ import annotations

import logging
from typing import Any

from celery import shared_task
from celery.signals import beat_init, before_task_publish, worker_ready

from talorys.ops import services
from talorys.ops.models import Heartbeat

log = logging.getLogger(__name__)

# Set in the beat process only: other processes may send the task too (a test, a shell).
_in_beat = False


@shared_task
def heartbeat() -> None:
    services.heartbeat_record(name=Heartbeat.Name.WORKER)


@worker_ready.connect
def _worker_started(**kwargs: Any) -> None:
    # Through the broker, not written here: the first heartbeat also proves the worker consumes.
    try:
        heartbeat.delay()
    except Exception:  # the broker is not there yet: beat's first tick will do it
        log.exception("Could not send the start-up heartbeat")


@beat_init.connect
def _beat_started(**kwargs: Any) -> None:
    global _in_beat
    _in_beat = True
    _beat_alive()


@before_task_publish.connect
def _beat_sends(sender: str | None = None, **kwargs: Any) -> None:
    if _in_beat and sender == heartbeat.name:
        _beat_alive()


def _beat_alive() -> None:
    # Never let the record stop beat from sending: a database hiccup shows as a stale beat.
    try:
        services.heartbeat_record(name=Heartbeat.Name.BEAT)
    except Exception:
        log.exception("Could not record beat's heartbeat")
