"""Writes of the operations app: heartbeats, setup records, the system jobs' rows."""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection

from django.db import transaction
from django.utils import timezone
from django_celery_beat.models import IntervalSchedule, PeriodicTask

from talorys.lib.errors import ValidationFailed
from talorys.ops.models import Heartbeat, SetupRun
from talorys.ops.selectors import app_version


def heartbeat_record(*, name: str) -> Heartbeat:
    """Mark `name` ("worker" or "beat") alive now."""
    if name not in Heartbeat.Name.values:
        raise ValueError(f"Unknown heartbeat {name!r}")
    beat, _ = Heartbeat.objects.update_or_create(name=name, defaults={"at": timezone.now()})
    return beat


def setup_run_record(
    *, kind: str, started_at: dt.datetime, ok: bool, message: str = ""
) -> SetupRun:
    """Record a finished setup or upgrade run (written at its end: on a fresh installation this
    table exists only once the run has migrated)."""
    return SetupRun.objects.create(
        version=app_version()[: SetupRun.VERSION_MAX],
        kind=kind,
        outcome=SetupRun.Outcome.OK if ok else SetupRun.Outcome.FAILED,
        started_at=started_at,
        finished_at=timezone.now(),
        message=message[: SetupRun.MESSAGE_MAX],
    )


def system_job_update(
    *, job_id: int, enabled: bool | None = None, every_seconds: int | None = None
) -> PeriodicTask:
    """The operator's change of a system job: paused or resumed, or run every `every_seconds`.

    Saved through the model, which marks the change for django-celery-beat: a running beat
    takes it within a few seconds, and talorys/ops/beat.py keeps it across restarts. (The
    library's save also clears ``last_run_at`` of a paused job.)
    """
    with transaction.atomic():
        job = PeriodicTask.objects.select_for_update().get(pk=job_id)
        if enabled is not None:
            job.enabled = enabled
        if every_seconds is not None:
            if job.interval_id is None:
                raise ValidationFailed(
                    "every_seconds: this job runs on a calendar, not an interval."
                )
            if every_seconds < 1:
                raise ValidationFailed("every_seconds must be at least 1.")
            job.interval = _interval(every_seconds)
        job.save()
    return job


def _interval(seconds: int) -> IntervalSchedule:
    # Interval rows are shared by every job with the same one (as django-celery-beat makes them).
    found = IntervalSchedule.objects.filter(every=seconds, period=IntervalSchedule.SECONDS).first()
    return found or IntervalSchedule.objects.create(every=seconds, period=IntervalSchedule.SECONDS)


def system_jobs_remove_except(*, names: Collection[str]) -> list[str]:
    """Remove the jobs no longer in the setting (their task may be gone from the code too): the
    names removed. The delete marks the change for a running beat, as the model's delete does."""
    gone = sorted(PeriodicTask.objects.exclude(name__in=names).values_list("name", flat=True))
    PeriodicTask.objects.filter(name__in=gone).delete()
    return gone
