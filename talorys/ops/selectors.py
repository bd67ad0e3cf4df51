"""Reads of the operations app: the app's version, heartbeat freshness, the last setup run."""

from __future__ import annotations

import datetime as dt
import functools
import tomllib
from typing import NamedTuple

from django.conf import settings
from django.utils import timezone
from django_celery_beat.models import PeriodicTask

from talorys.ops.models import Heartbeat, SetupRun


@functools.cache
def app_version() -> str:
    """The version in pyproject.toml: the source tree is what runs (the image copies it too and
    installs no package of Talorys, so there is no package metadata to ask)."""
    try:
        with open(settings.BASE_DIR / "pyproject.toml", "rb") as fh:
            return str(tomllib.load(fh)["project"]["version"])
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        return "unknown"


class HeartbeatState(NamedTuple):
    status: str  # "ok" (fresh), "stale", "unknown" (never seen)
    at: dt.datetime | None


# The system job that proves the worker and beat alive (CELERY_BEAT_SCHEDULE).
HEARTBEAT_JOB = "ops-heartbeat"


def heartbeat_interval() -> dt.timedelta:
    """How often the heartbeat job runs: its interval in beat's table, where the operator may
    have changed it (the admin's System jobs), else the setting it was installed from."""
    row = (
        PeriodicTask.objects.filter(name=HEARTBEAT_JOB, interval__isnull=False)
        .values_list("interval__every", "interval__period")
        .first()
    )
    if row is None:
        return dt.timedelta(seconds=settings.TALORYS_HEARTBEAT_SECONDS)
    every, period = row
    return dt.timedelta(**{period: every})


def heartbeat_limit() -> dt.timedelta:
    """Three intervals: one late or dropped beat is not an outage."""
    return 3 * heartbeat_interval()


def heartbeat_states(*, now: dt.datetime | None = None) -> dict[str, HeartbeatState]:
    """Every heartbeat name, with its freshness at `now`."""
    now = now or timezone.now()
    seen = dict(Heartbeat.objects.values_list("name", "at"))
    limit = heartbeat_limit()
    states = {}
    for name in Heartbeat.Name.values:
        at = seen.get(name)
        if at is None:
            states[name] = HeartbeatState("unknown", None)
        else:
            states[name] = HeartbeatState("ok" if now - at <= limit else "stale", at)
    return states


def setup_run_latest() -> SetupRun | None:
    return SetupRun.objects.first()


# The schedule of a job is in one of these (PeriodicTask.scheduler reads them).
SCHEDULE_FIELDS = ("interval", "crontab", "solar", "clocked")
