"""Writes of the operations app: heartbeats and setup records."""

from __future__ import annotations

import datetime as dt

from django.utils import timezone

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
