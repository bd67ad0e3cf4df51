"""Housekeeping of automations (beat, every few minutes): runs whose worker died."""

from __future__ import annotations

import datetime as dt
import logging

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from automations.models import Automation, AutomationRun
from talorys.notifications import services as notify
from talorys.notifications.models import Notification

# Receipts made before leases existed have none: their age decides (longer than any run takes).
INTERRUPTED_AFTER = dt.timedelta(minutes=30)
INTERRUPTED_ERROR = "Interrupted: the worker stopped during the run. It was not retried."

log = logging.getLogger(__name__)


def lost_runs(now: dt.datetime) -> Q:
    """Running receipts whose worker is gone: lease run out, or (no lease) too old."""
    return Q(lease_until__lt=now) | Q(
        lease_until__isnull=True, started_at__lt=now - INTERRUPTED_AFTER
    )


def automation_run_reap(*, run: AutomationRun, automation: Automation, now: dt.datetime) -> bool:
    """Close one lost receipt as interrupted and tell the owner. Call inside a transaction."""
    claimed = (
        AutomationRun.objects.filter(pk=run.pk, status=AutomationRun.Status.RUNNING)
        .filter(lost_runs(now))
        .update(
            status=AutomationRun.Status.ERROR,
            finished_at=now,
            error=INTERRUPTED_ERROR,
            lease_until=None,
        )
    )
    if not claimed:  # finished, or renewed by its worker, since it was read
        return False
    log.warning(
        "Automation %s run %s: interrupted (its worker stopped)",
        automation.pk,
        run.pk,
        extra={"automation_id": automation.pk, "run_id": run.pk, "status": "interrupted"},
    )
    notification = notify.notification_send(
        title=f"Interrupted: {automation.name}"[: Notification.TITLE_MAX],
        body=INTERRUPTED_ERROR,
        kind=Notification.Kind.ERROR,
        source=automation.source,
    )
    AutomationRun.objects.filter(pk=run.pk).update(notification=notification)
    Automation.objects.filter(pk=automation.pk).update(
        last_status=Automation.Status.ERROR, last_error=INTERRUPTED_ERROR
    )
    return True


def automation_runs_reap(*, now: dt.datetime | None = None) -> int:
    """Close receipts whose worker died mid-run (a scheduled prompt): recorded as errors and
    told to the owner, not re-run. Returns how many."""
    now = now or timezone.now()
    reaped = 0
    lost = AutomationRun.objects.filter(status=AutomationRun.Status.RUNNING).filter(lost_runs(now))
    for run in lost.select_related("automation"):
        with transaction.atomic():
            reaped += automation_run_reap(run=run, automation=run.automation, now=now)
    return reaped
