"""Celery tasks of automations: thin wrappers over automations.services."""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

from celery import shared_task
from celery.signals import worker_ready
from django.db import InterfaceError, OperationalError

from automations import services

log = logging.getLogger(__name__)


@shared_task
def dispatch_due() -> int:
    """Beat, every few seconds: claim due automations and enqueue their runs."""
    return len(services.automations_dispatch())


# Retrying is safe: the receipt makes a second attempt at the same slot a no-op.
@shared_task(autoretry_for=(OperationalError, InterfaceError), retry_backoff=True, max_retries=5)
def run_automation(automation_id: int, slot: str, version: int) -> str | None:
    run = services.automation_run(
        automation_id=automation_id, slot=dt.datetime.fromisoformat(slot), version=version
    )
    return run.status if run is not None else None


@shared_task
def housekeeping() -> dict[str, int]:
    """Beat, every few minutes: close interrupted runs, empty the automations' bin."""
    return {
        "interrupted": services.automation_runs_reap(),
        "purged": services.automations_bin_purge(),
    }


@worker_ready.connect
def _catch_up_at_start(**kwargs: Any) -> None:
    """A worker that starts catches up at once instead of waiting for beat's next tick."""
    try:
        dispatch_due.delay()
    except Exception:  # the broker is not there yet: beat's ticks will do it
        log.exception("Could not enqueue the start-up dispatch")
