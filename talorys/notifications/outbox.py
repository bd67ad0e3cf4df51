"""The life of a delivery (a Web Push to a browser, a message to a channel), shared by both.

A delivery is made ``pending`` (or ``held`` in quiet hours) in the notification's transaction,
and its task is enqueued on commit. Sending starts with a claim, a conditional UPDATE to
``sending``: of every task that tries to send one delivery (the one enqueued on commit, the
flush that re-sends what was held or lost), exactly one finds it still waiting, so each is sent
at most once per attempt. What happened is recorded only on a delivery still ``sending``: sent,
retried later with exponential backoff up to MAX_ATTEMPTS, or failed.

The beat's flush (``due``) hands back what is waiting: held past quiet hours, retries that are
due, pending ones whose task never came (a lost message, a dead worker) and ``sending`` ones
whose worker died mid-send. It also prunes finished deliveries after RETENTION.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.db.models import F, Q

from talorys.notifications.models import Delivery
from talorys.notifications.quiet import quiet_hours_until

MAX_ATTEMPTS = 5
RETRY_BASE = dt.timedelta(minutes=1)
STUCK_AFTER = dt.timedelta(minutes=5)  # a "sending" this old lost its worker
PENDING_GRACE = dt.timedelta(seconds=30)  # let the task enqueued on commit go first
RETENTION = dt.timedelta(days=30)

Status = Delivery.Status


def deliveries_create(
    model: type[Delivery], rows: list[dict[str, Any]], now: dt.datetime
) -> list[int]:
    """One delivery per row (its destination's fields), in one INSERT: waiting for the end of
    quiet hours (``held``) or to send now. Returns the ids to send now (none in quiet hours)."""
    if not rows:  # nothing to send: no need to read quiet hours
        return []
    hold = quiet_hours_until(now=now)
    status = Status.HELD if hold else Status.PENDING
    deliveries = model._default_manager.bulk_create(
        [model(status=status, not_before=hold or now, **row) for row in rows]
    )
    return [] if hold else [delivery.pk for delivery in deliveries]


def hold_or_claim(model: type[Delivery], pk: int, now: dt.datetime) -> str | None:
    """Claim the delivery for sending: ``SENDING`` when this caller is to send it now, ``HELD``
    when quiet hours hold it (it waits for their end), None when there is nothing to do
    (another caller claimed it, it was sent, or it is not due yet)."""
    hold = quiet_hours_until(now=now)
    if hold is not None:
        model._default_manager.filter(pk=pk, status__in=[Status.PENDING, Status.HELD]).update(
            status=Status.HELD, not_before=hold, updated_at=now
        )
        return Status.HELD
    claimed = model._default_manager.filter(
        pk=pk, status__in=[Status.PENDING, Status.HELD], not_before__lte=now
    ).update(status=Status.SENDING, attempts=F("attempts") + 1, updated_at=now)
    return Status.SENDING if claimed else None


def record(model: type[Delivery], pk: int, now: dt.datetime, **fields: object) -> None:
    """Write the outcome of a send onto the delivery, if it is still this sender's."""
    model._default_manager.filter(pk=pk, status=Status.SENDING).update(updated_at=now, **fields)


def settle(
    delivery: Delivery, now: dt.datetime, *, error: str, retryable: bool, **fields: object
) -> str:
    """Record a send's outcome: sent (no error), retried later with backoff, or failed when it
    cannot succeed or is out of attempts. Returns the new status."""
    model = type(delivery)
    if not error:
        record(model, delivery.pk, now, status=Status.SENT, sent_at=now, error="", **fields)
        return Status.SENT
    if retryable and delivery.attempts < MAX_ATTEMPTS:
        fields["not_before"] = now + RETRY_BASE * 2 ** (delivery.attempts - 1)
        status = Status.PENDING
    else:
        status = Status.FAILED
    record(model, delivery.pk, now, status=status, error=error, **fields)
    return status


def due(model: type[Delivery], now: dt.datetime) -> list[int]:
    """The deliveries to (re)send now, oldest first; also frees stuck ones and prunes old ones."""
    stuck = model._default_manager.filter(status=Status.SENDING, updated_at__lt=now - STUCK_AFTER)
    stuck.filter(attempts__gte=MAX_ATTEMPTS).update(
        status=Status.FAILED, error="The worker stopped while sending.", updated_at=now
    )
    stuck.update(status=Status.PENDING, not_before=now, updated_at=now)
    model._default_manager.filter(
        status__in=[Status.SENT, Status.FAILED, Status.GONE], created_at__lt=now - RETENTION
    ).delete()
    if quiet_hours_until(now=now) is not None:
        return []
    waiting = model._default_manager.filter(
        Q(status=Status.HELD, not_before__lte=now)
        | Q(status=Status.PENDING, not_before__lte=now - PENDING_GRACE)
    )
    return list(waiting.order_by("not_before").values_list("pk", flat=True)[:1000])
