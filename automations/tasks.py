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
from automations.services.housekeeping import automation_runs_reap

log = logging.getLogger(__name__)


def dispatch_and_enqueue(*, batch: int = dispatch.DISPATCH_BATCH) -> list[dispatch.Claim]:
    """Claim the due slots and send their run tasks, each batch once it has committed (while
    the next batch is claimed). Returns the claims."""
    claims: list[dispatch.Claim] = []
    for batch_claims in dispatch.automations_dispatch_batches(batch=batch):
        # On commit: a caller's open transaction could still roll the claims back.
        transaction.on_commit(partial(_enqueue, batch_claims))
        claims += batch_claims
    return claims


# Reminders and digests due together run this many to a task: one broker round trip, one
# task's overhead and one transaction with bulk writes for the lot (runs.automation_runs_together),
# spread over the workers' processes. Each still has its own receipt, so a slot runs once
# whatever is redelivered. 10,000 due at once (benchmarks/dispatch.py, 2 busy cores): 650-900
# runs/s with 50, 720 with 100 (no better, and 1,000 would then make fewer chunks than processes).
RUN_CHUNK = 50


def _enqueue(claims: list[dispatch.Claim]) -> None:
    """Send the run tasks of committed claims, over one broker connection: a model prompt's alone,
    deterministic ones RUN_CHUNK to a task. A claim the broker refuses is handed back, so that a
    later tick claims it again instead of losing it."""
    prompts = [claim for claim in claims if not claim.deterministic]
    quick = [claim for claim in claims if claim.deterministic]
    sends: list[tuple[Any, list[dispatch.Claim], tuple[Any, ...]]] = [
        (run_automation, [claim], _args(claim)) for claim in prompts
    ]
    for start in range(0, len(quick), RUN_CHUNK):
        chunk = quick[start : start + RUN_CHUNK]
        sends.append((run_automations, chunk, ([_args(claim) for claim in chunk],)))
    with run_automation.app.producer_or_acquire() as producer:
        for task, sent, args in sends:
            try:
                task.apply_async(args, producer=producer)
            except Exception:
                log.exception("Could not enqueue the runs of %d claim(s)", len(sent))
                for claim in sent:
                    dispatch.claim_hand_back(claim=claim)


def _args(claim: dispatch.Claim) -> tuple[int, str, int]:
    return (claim.automation_id, claim.slot.isoformat(), claim.version)


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
def run_automations(claims: list[tuple[int, str, int]]) -> int:
    """Run several claimed deterministic slots together (runs.automation_runs_together: one
    transaction, bulk writes). If that fails, each is run on its own, as run_automation does, so
    that one bad row costs the others nothing: one whose database trip fails is sent again on
    its own (run_automation retries it); one that fails otherwise is logged. Returns how many
    were done here (run, or found to have run already or to be stale)."""
    parsed = [(pk, dt.datetime.fromisoformat(slot), version) for pk, slot, version in claims]
    try:
        alone = runs.automation_runs_together(parsed)
    except Exception:
        log.exception("A chunk of %d runs failed together; running each alone", len(parsed))
        alone = parsed
    ran = len(parsed) - len(alone)
    for automation_id, slot, version in alone:
        try:
            runs.automation_run(automation_id=automation_id, slot=slot, version=version)
            ran += 1
        except (OperationalError, InterfaceError):
            log.warning("Automation %s slot %s: sent again on its own", automation_id, slot)
            run_automation.delay(automation_id, slot.isoformat(), version)
        except Exception:  # one run's bug must not cost the rest of the chunk their runs
            log.exception("Automation %s slot %s: the run failed", automation_id, slot)
    return ran


@shared_task
def housekeeping() -> dict[str, int]:
    """Beat, every few minutes: close interrupted runs (the bin's purge is the bin's own job,
    talorys/history/tasks.py)."""
    return {"interrupted": automation_runs_reap()}


@worker_ready.connect
def _catch_up_at_start(**kwargs: Any) -> None:
    """A worker that starts catches up at once instead of waiting for beat's next tick."""
    try:
        dispatch_due.delay()
    except Exception:  # the broker is not there yet: beat's ticks will do it
        log.exception("Could not enqueue the start-up dispatch")
