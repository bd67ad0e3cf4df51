"""The dispatcher: claims the due slots of automations and advances their schedules.

It enqueues nothing itself: it returns its claims, and the Celery task (automations/tasks.py)
sends one run task per claim. A claim the broker refuses is handed back (``claim_hand_back``).
See automations/services/__init__.py for how each slot runs exactly once.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from django.db import IntegrityError, transaction
from django.utils import timezone

from automations.models import Automation, AutomationRun
from talorys.lib.errors import ValidationFailed
from talorys.lib.schedules import Schedule, next_after, schedule_parse
from talorys.notifications import services as notify
from talorys.notifications.models import Notification
from talorys.owner.selectors import owner_zone

CATCH_UP_WINDOW = dt.timedelta(hours=24)
DISPATCH_BATCH = 200
DISPATCH_MAX_BATCHES = 50


@dataclass(frozen=True)
class Claim:
    """One slot of one automation, claimed by the dispatcher, to be run by one task."""

    automation_id: int
    slot: dt.datetime
    version: int
    # Where the claim moved ``next_run_at``: handing the claim back restores its slot only if
    # nothing moved the automation since.
    advanced_to: dt.datetime | None = None
    # A reminder or digest: no model call, so its run is short and many share one task.
    deterministic: bool = False


def _slots(
    schedule: Schedule, zone: ZoneInfo, slot: dt.datetime, now: dt.datetime
) -> tuple[dt.datetime | None, dt.datetime | None]:
    """For a due ``slot``: the slot to run now, and the next slot after now.

    The slot to run is the latest one that is due, provided it is less than CATCH_UP_WINDOW
    old; None when every due slot is older than that.
    """
    latest = slot
    cursor = max(slot, now - CATCH_UP_WINDOW)
    upcoming = next_after(schedule, cursor, zone)
    # Bounded: at most one day of occurrences (1,440 for an every-minute cron).
    while upcoming is not None and upcoming <= now:
        latest = upcoming
        upcoming = next_after(schedule, upcoming, zone)
    return (latest if now - latest < CATCH_UP_WINDOW else None), upcoming


def _local(value: dt.datetime, zone: ZoneInfo) -> str:
    return f"{value.astimezone(zone):%a %d %b %Y %H:%M} ({zone.key})"


def missed_notify(
    automation: Automation, *, slot: dt.datetime, zone: ZoneInfo, error: str
) -> Notification:
    """Tell the owner that a slot was too old to run (here, or in a run started that late)."""
    return notify.notification_send(
        title=f"Missed: {automation.name}"[: Notification.TITLE_MAX],
        body=f"It was due {_local(slot, zone)}. {error}",
        kind=Notification.Kind.AUTOMATION,
        source=automation.source,
    )


def _record_missed(automation: Automation, slot: dt.datetime, zone: ZoneInfo) -> None:
    """A skipped receipt and a notification for a slot that is too old to run. Call with the
    automation locked (the dispatcher)."""
    now = timezone.now()
    error = "Missed by more than 24 hours (nothing was running then), so it was not run."
    try:
        with transaction.atomic():
            run = AutomationRun.objects.create(
                automation=automation,
                slot=slot,
                status=AutomationRun.Status.SKIPPED,
                started_at=now,
                finished_at=now,
                error=error,
            )
    except IntegrityError:  # this slot already has its receipt
        return
    run.notification = missed_notify(automation, slot=slot, zone=zone, error=error)
    run.save(update_fields=["notification"])
    Automation.objects.filter(pk=automation.pk).update(
        last_run_at=now, last_status=Automation.Status.SKIPPED, last_error=error
    )


def _dispatch_batch(*, now: dt.datetime, zone: ZoneInfo, batch: int) -> tuple[int, list[Claim]]:
    claims: list[Claim] = []
    advanced: dict[dt.datetime | None, list[int]] = defaultdict(list)
    with transaction.atomic():
        # SKIP LOCKED: rows another dispatcher (or a run, or an owner edit) holds are left to
        # it; re-evaluating next_run_at under the lock excludes rows it just advanced.
        rows = list(
            Automation.objects.live()
            .filter(enabled=True, next_run_at__lte=now)
            .select_for_update(skip_locked=True)
            .order_by("next_run_at", "pk")[:batch]
        )
        for automation in rows:
            slot = automation.next_run_at
            assert slot is not None  # the query's next_run_at <= now
            try:
                schedule = schedule_parse(automation.schedule)
            except ValidationFailed as exc:  # only a hand edit in the admin can get here
                Automation.objects.filter(pk=automation.pk).update(
                    enabled=False,
                    next_run_at=None,
                    last_status=Automation.Status.ERROR,
                    last_error=f"Paused: its schedule is invalid ({exc.message}).",
                    updated_at=now,
                )
                continue
            run_slot, upcoming = _slots(schedule, zone, slot, now)
            if slot != run_slot and now - slot >= CATCH_UP_WINDOW:
                _record_missed(automation, slot, zone)
            advanced[upcoming].append(automation.pk)
            if run_slot is not None:
                claims.append(
                    Claim(
                        automation.pk,
                        run_slot,
                        automation.version,
                        upcoming,
                        deterministic=automation.kind != Automation.Kind.AGENT_PROMPT,
                    )
                )
        # One UPDATE per distinct next slot: automations due together mostly share the next one.
        for upcoming, pks in advanced.items():
            # A one-time automation, or one whose schedule has no more dates, is done.
            Automation.objects.filter(pk__in=pks).update(
                next_run_at=upcoming, enabled=upcoming is not None, updated_at=now
            )
    return len(rows), claims


def _rearm_for_time_zone(*, now: dt.datetime, zone: ZoneInfo) -> int:
    """Recompute future slots armed in another time zone (the owner moved)."""
    with transaction.atomic():
        rows = list(
            Automation.objects.live()
            .filter(enabled=True, next_run_at__gt=now)
            .exclude(armed_time_zone=zone.key)
            .select_for_update(skip_locked=True)
        )
        rearmed = []
        for automation in rows:
            try:
                schedule = schedule_parse(automation.schedule)
            except ValidationFailed:  # a hand edit in the admin: paused when it comes due
                continue
            automation.next_run_at = next_after(schedule, now, zone)
            automation.enabled = automation.next_run_at is not None
            automation.armed_time_zone = zone.key
            rearmed.append(automation)
        Automation.objects.bulk_update(rearmed, ["next_run_at", "enabled", "armed_time_zone"])
    return len(rearmed)


def automations_dispatch_batches(
    *, now: dt.datetime | None = None, batch: int = DISPATCH_BATCH
) -> Iterator[list[Claim]]:
    """Claim every due automation and advance it, ``batch`` rows per transaction.

    Yields the claims of each batch once its transaction has committed, so that the caller can
    enqueue their runs while the next batch is claimed. Safe to run concurrently with itself, on
    PostgreSQL (row locks) and on SQLite (one writer).
    """
    now = now or timezone.now()
    zone = owner_zone()
    _rearm_for_time_zone(now=now, zone=zone)
    for _ in range(DISPATCH_MAX_BATCHES):
        seen, claims = _dispatch_batch(now=now, zone=zone, batch=batch)
        if claims:
            yield claims
        if seen < batch:
            break


def automations_dispatch(
    *, now: dt.datetime | None = None, batch: int = DISPATCH_BATCH
) -> list[Claim]:
    """Claim every due automation and advance it; returns the claims, whose runs the caller
    enqueues (automations/tasks.py)."""
    return [
        claim for claims in automations_dispatch_batches(now=now, batch=batch) for claim in claims
    ]


def claim_hand_back(*, claim: Claim) -> None:
    """A claim whose run task could not be sent: its slot becomes due again, so that a later
    tick claims it again instead of losing it. Unless the automation changed since the claim."""
    Automation.objects.filter(
        pk=claim.automation_id, version=claim.version, next_run_at=claim.advanced_to
    ).update(next_run_at=claim.slot, enabled=True)
