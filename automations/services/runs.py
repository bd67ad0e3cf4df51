"""The run of one claimed slot: its receipt, its work and its outcome.

See automations/services/__init__.py for how each slot runs exactly once.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from django.db import IntegrityError, connection, transaction
from django.db.models import F, Subquery
from django.utils import timezone

from automations.models import Automation, AutomationRun
from automations.services.digest import task_digest_text
from automations.services.dispatch import CATCH_UP_WINDOW, missed_notify
from automations.services.housekeeping import automation_run_reap, lost_runs
from talorys.lib.errors import AppError, BudgetExhausted
from talorys.notifications import services as notify
from talorys.notifications.models import Notification
from talorys.workspace import services
from talorys.workspace.services import owner_zone

log = logging.getLogger(__name__)

MAX_RUNS_KEPT = 50
RESULT_CHARS = 2_000
# A running receipt's lease, renewed every RUN_LEASE_RENEW by the worker doing the run: a worker
# that died is noticed within RUN_LEASE, one that is merely slow keeps its run.
RUN_LEASE = dt.timedelta(minutes=2)
RUN_LEASE_RENEW = dt.timedelta(seconds=30)
OVERLAP_ERROR = "skipped: previous run still in progress"


def _finish(
    automation: Automation,
    run: AutomationRun,
    *,
    status: str,
    result: str = "",
    error: str = "",
    usage: dict[str, int] | None = None,
    notification: Notification | None = None,
) -> AutomationRun:
    """Close the receipt, update the automation's summary and trim its history."""
    now = timezone.now()
    run.status, run.finished_at = status, now
    run.result, run.error = result[:RESULT_CHARS], error[:RESULT_CHARS]
    run.usage = usage or {}
    run.notification = notification
    run.save(update_fields=["status", "finished_at", "result", "error", "usage", "notification"])
    counted = {"run_count": F("run_count") + 1} if status != AutomationRun.Status.SKIPPED else {}
    Automation.objects.filter(pk=automation.pk).update(
        last_run_at=now,
        last_status=status,
        last_result=run.result,
        last_error=run.error,
        **counted,
    )
    runs = AutomationRun.objects.filter(automation_id=automation.pk)
    keep = runs.order_by("-slot").values("pk")[:MAX_RUNS_KEPT]
    runs.exclude(pk__in=Subquery(keep)).exclude(status=AutomationRun.Status.RUNNING).delete()
    log.info(
        "Automation %s run %s (slot %s): %s",
        automation.pk,
        run.pk,
        run.slot.isoformat(),
        status,
        extra={"automation_id": automation.pk, "run_id": run.pk, "status": status},
    )
    return run


def _run_deterministic(automation: Automation, run: AutomationRun) -> AutomationRun:
    if automation.kind == Automation.Kind.REMINDER:
        title = automation.name
        body = automation.message if automation.message != automation.name else ""
        kind = Notification.Kind.REMINDER
        result = f"Reminded: {automation.name}"
    else:
        title, body = task_digest_text(
            name=automation.name, heading=automation.message, now=timezone.now(), zone=owner_zone()
        )
        kind = Notification.Kind.DIGEST
        result = title
    notification = notify.notification_send(
        title=title, body=body, kind=kind, source=automation.source
    )
    return _finish(
        automation, run, status=AutomationRun.Status.OK, result=result, notification=notification
    )


def _skip_for_budget(
    automation: Automation, run: AutomationRun, reason: str, *, usage: dict[str, int] | None = None
) -> AutomationRun:
    with transaction.atomic():
        notification = notify.notification_send(
            title=f"Skipped: {automation.name}"[: Notification.TITLE_MAX],
            body=f"{reason} The scheduled prompt did not run; it will try again at its next time.",
            kind=Notification.Kind.AUTOMATION,
            source=automation.source,
        )
        return _finish(
            automation,
            run,
            status=AutomationRun.Status.SKIPPED,
            error=reason,
            usage=usage,
            notification=notification,
        )


def _run_prompt(automation: Automation, run: AutomationRun) -> AutomationRun:
    """The agent_prompt branch. Called with the receipt committed and no transaction open.

    The runner reserves the scheduled and the ordinary AI budget before each model call; a day
    with either one used up skips the run here, before anything is spent on it.
    """
    for kind in ("scheduled_ai", "ai"):
        if services.usage_remaining(kind=kind) <= 0:
            reason = f"Today's {kind.replace('_', ' ')} request budget is used up."
            return _skip_for_budget(automation, run, reason)
    usage: dict[str, int] = {}  # filled by the runner, also when it raises
    try:
        # Imported here: the runner is the agent layer's, below this one, and only this branch
        # needs it. The model call runs outside any transaction (it can take a minute).
        from agent.runner import run_scheduled_prompt

        with _lease_kept(run.pk):
            reply = run_scheduled_prompt(
                prompt=automation.message, source=automation.source, usage=usage
            )
    except BudgetExhausted as exc:
        return _skip_for_budget(automation, run, exc.message, usage=usage)
    except Exception as exc:
        log.exception("Automation %s (agent_prompt) failed", automation.pk)
        error = exc.message if isinstance(exc, AppError) else f"{exc.__class__.__name__}: {exc}"
        with transaction.atomic():
            notification = notify.notification_send(
                title=f"Failed: {automation.name}"[: Notification.TITLE_MAX],
                body=f"The scheduled prompt could not finish: {error}"[: Notification.BODY_MAX],
                kind=Notification.Kind.ERROR,
                source=automation.source,
            )
            return _finish(
                automation,
                run,
                status=AutomationRun.Status.ERROR,
                error=error,
                usage=usage,
                notification=notification,
            )
    reply = (reply or "").strip() or "(The model gave no answer.)"
    with transaction.atomic():
        notification = notify.notification_send(
            title=automation.name,
            body=reply[: Notification.BODY_MAX],
            kind=Notification.Kind.AUTOMATION,
            source=automation.source,
        )
        return _finish(
            automation,
            run,
            status=AutomationRun.Status.OK,
            result=reply,
            usage=usage,
            notification=notification,
        )


def automation_run(*, automation_id: int, slot: dt.datetime, version: int) -> AutomationRun | None:
    """Run one claimed slot, at most once (see the module docstring).

    Returns the receipt, or None when the task has nothing to do: the automation is gone or
    changed since the claim (stale version), or this slot already has its receipt.
    """
    with transaction.atomic():
        # The row lock queues duplicate tasks for this automation; each re-checks under it.
        automation = Automation.objects.select_for_update().filter(pk=automation_id).first()
        if automation is None or automation.deleted_at is not None or automation.version != version:
            log.info("Automation %s slot %s is stale; not run", automation_id, slot)
            return None
        started = timezone.now()
        try:
            with transaction.atomic():
                run = AutomationRun.objects.create(
                    automation=automation,
                    slot=slot,
                    started_at=started,
                    lease_until=started + RUN_LEASE,
                )
        except IntegrityError:  # the receipt exists: a redelivered or duplicated task
            log.info("Automation %s slot %s already ran; not run again", automation_id, slot)
            return None
        # Under the automation's lock, so two slots' tasks cannot both see nothing in progress.
        # A reminder or digest runs inside this transaction, under this lock, so no run of it
        # is ever in progress beside it: only a model prompt's run (outside it) is looked for.
        prompt = automation.kind == Automation.Kind.AGENT_PROMPT
        if prompt and _run_in_progress(automation, now=started, exclude=run.pk):
            log.info("Automation %s slot %s skipped: a run is in progress", automation_id, slot)
            return _finish(
                automation, run, status=AutomationRun.Status.SKIPPED, error=OVERLAP_ERROR
            )
        if started - slot >= CATCH_UP_WINDOW:  # the queue held it that long: too late to act
            error = "Its run started more than 24 hours late, so it was not run."
            notification = missed_notify(automation, slot=slot, zone=owner_zone(), error=error)
            return _finish(
                automation,
                run,
                status=AutomationRun.Status.SKIPPED,
                error=error,
                notification=notification,
            )
        if automation.kind != Automation.Kind.AGENT_PROMPT:
            return _run_deterministic(automation, run)
    return _run_prompt(automation, run)


def _run_in_progress(automation: Automation, *, now: dt.datetime, exclude: int) -> bool:
    """Whether another run of the (locked) automation is in progress; a lost one is reaped
    here, so a dead worker holds up the next slot no longer than its lease."""
    running = AutomationRun.objects.filter(
        automation_id=automation.pk, status=AutomationRun.Status.RUNNING
    ).exclude(pk=exclude)
    for run in running.filter(lost_runs(now)):
        automation_run_reap(run=run, automation=automation, now=now)
    return running.exists()


@contextmanager
def _lease_kept(run_id: int) -> Iterator[None]:
    """Renew the running receipt's lease from a side thread while the block runs (the model
    call blocks this one). The thread stops with the block, so a dead worker renews nothing."""
    stop = threading.Event()

    def renew() -> None:
        try:
            while not stop.wait(RUN_LEASE_RENEW.total_seconds()):
                AutomationRun.objects.filter(pk=run_id, status=AutomationRun.Status.RUNNING).update(
                    lease_until=timezone.now() + RUN_LEASE
                )
        except Exception:  # the lease then runs out and the run is reaped: logged, not raised
            log.exception("Could not renew the lease of automation run %s", run_id)
        finally:
            connection.close()  # this thread's own connection

    thread = threading.Thread(target=renew, name=f"automation-run-{run_id}-lease", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
