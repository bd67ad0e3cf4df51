"""Celery tasks of automations: thin wrappers over automations/services/.

The dispatcher returns its claims and the dispatch task enqueues them, so the services never
import the tasks.
"""

from __future__ import annotations

import datetime as dt
import logging
from functools import partial
from typing import Any

from celery import shared_task
from celery.signals import worker_ready
from django.db import InterfaceError, OperationalError, transaction

from automations.services import dispatch, runs
from automations.services.housekeeping import automation_runs_reap, automations_bin_purge

log = logging.getLogger(__name__)


def dispatch_and_enqueue(*, batch: int = dispatch.DISPATCH_BATCH) -> list[dispatch.Claim]:
    """Claim the due slots and send one run task per claim, each batch once it has committed
    (while the next batch is claimed). Returns the claims."""
    claims: list[dispatch.Claim] = []
    for batch_claims in dispatch.automations_dispatch_batches(batch=batch):
        # On commit: a caller's open transaction could still roll the claims back.
        transaction.on_commit(partial(_enqueue, batch_claims))
        claims += batch_claims
    return claims


def _enqueue(claims: list[dispatch.Claim]) -> None:
    """Send the run tasks of committed claims, over one broker connection. A claim the broker
    refuses is handed back, so that a later tick claims it again instead of losing it."""
    with run_automation.app.producer_or_acquire() as producer:
        for claim in claims:
            try:
                run_automation.apply_async(
                    (claim.automation_id, claim.slot.isoformat(), claim.version),
                    producer=producer,
                )
            except Exception:
                log.exception(
                    "Could not enqueue automation %s slot %s", claim.automation_id, claim.slot
                )
                dispatch.claim_hand_back(claim=claim)


@shared_task
def dispatch_due() -> int:
    """Beat, every few seconds: claim due automations and enqueue their runs."""
    return len(dispatch_and_enqueue())


# Retrying is safe: the receipt makes a second attempt at the same slot a no-op.
@shared_task(autoretry_for=(OperationalError, InterfaceError), retry_backoff=True, max_retries=5)
def run_automation(automation_id: int, slot: str, version: int) -> str | None:
    run = runs.automation_run(
        automation_id=automation_id, slot=dt.datetime.fromisoformat(slot), version=version
    )
    return run.status if run is not None else None


@shared_task
def housekeeping() -> dict[str, int]:
    """Beat, every few minutes: close interrupted runs, empty the automations' bin."""
    return {
        "interrupted": automation_runs_reap(),
        "purged": automations_bin_purge(),
    }


@worker_ready.connect
def _catch_up_at_start(**kwargs: Any) -> None:
    """A worker that starts catches up at once instead of waiting for beat's next tick."""
    try:
        dispatch_due.delay()
    except Exception:  # the broker is not there yet: beat's ticks will do it
        log.exception("Could not enqueue the start-up dispatch")
