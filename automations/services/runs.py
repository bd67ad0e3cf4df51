"""The run of one claimed slot: its receipt, its work and its outcome.

``automation_run`` runs one slot. ``automation_runs_together`` runs many reminders' and digests'
slots (a chunk of them, automations/tasks.py) in one transaction with the same checks, writing
receipts, notifications and outcomes in bulk: a dozen queries for a chunk instead of a dozen a run.
See automations/services/__init__.py for how each slot runs exactly once.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from django.db import IntegrityError, connection, transaction
from django.db.models import F, Window
from django.db.models.functions import RowNumber
from django.utils import timezone

from agent.automation_conversations import conversation_from_automation
from automations.models import Automation, AutomationRun
from automations.selectors import task_digest_text
from automations.services.dispatch import CATCH_UP_WINDOW, missed_notify
from automations.services.housekeeping import automation_run_reap, lost_runs

if TYPE_CHECKING:
    from agent.runner.scheduled import ScheduledReply
from talorys.lib.errors import AppError, BudgetExhausted
from talorys.lib.timefmt import format_date
from talorys.notifications import services as notify
from talorys.notifications.models import Notification
from talorys.owner.selectors import owner_zone, usage_remaining

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
    run.usage, run.notification = usage or {}, notification
    fields = ["status", "finished_at", "result", "error", "usage", "notification", "conversation"]
    run.save(update_fields=fields)
    counted = {"run_count": F("run_count") + 1} if status != AutomationRun.Status.SKIPPED else {}
    Automation.objects.filter(pk=automation.pk).update(
        last_run_at=now,
        last_status=status,
        last_result=run.result,
        last_error=run.error,
        **counted,
    )
    _trim_history([automation.pk])
    _log_run(run)
    return run


def _trim_history(automation_ids: Iterable[int]) -> None:
    """Keep the latest MAX_RUNS_KEPT runs of each automation (and any run in progress): one
    DELETE for all of them, however many."""
    ranked = (
        AutomationRun.objects.filter(automation_id__in=automation_ids)
        .annotate(rank=Window(RowNumber(), partition_by="automation_id", order_by="-slot"))
        .filter(rank__gt=MAX_RUNS_KEPT)
        .exclude(status=AutomationRun.Status.RUNNING)
    )
    AutomationRun.objects.filter(pk__in=ranked.values("pk")).delete()


def _log_run(run: AutomationRun) -> None:
    log.info(
        "Automation %s run %s (slot %s): %s",
        run.automation_id,
        run.pk,
        run.slot.isoformat(),
        run.status,
        extra={"automation_id": run.automation_id, "run_id": run.pk, "status": run.status},
    )


def _deterministic_outcome(
    automation: Automation, *, now: dt.datetime, zone: Callable[[], ZoneInfo] = owner_zone
) -> tuple[notify.Draft, str]:
    """A reminder's or digest's notification and the run's result."""
    if automation.kind == Automation.Kind.REMINDER:
        body = automation.message if automation.message != automation.name else ""
        draft = notify.Draft(automation.name, body, Notification.Kind.REMINDER, automation.source)
        return draft, f"Reminded: {automation.name}"
    title, body = task_digest_text(
        name=automation.name, heading=automation.message, now=now, zone=zone()
    )
    return notify.Draft(title, body, Notification.Kind.DIGEST, automation.source), title


def _run_deterministic(automation: Automation, run: AutomationRun) -> AutomationRun:
    draft, result = _deterministic_outcome(automation, now=timezone.now())
    (notification,) = notify.notifications_send([draft])
    return _finish(
        automation, run, status=AutomationRun.Status.OK, result=result, notification=notification
    )


def _finish_with_notice(
    automation: Automation,
    run: AutomationRun,
    notice: tuple[str, str, str],
    *,
    status: str,
    result: str = "",
    error: str = "",
    usage: dict[str, int] | None = None,
    source: str = "",
) -> AutomationRun:
    """Tell the owner (``notice``: title, body, kind; ``source``: the automation's if not given)
    and close the receipt, in one transaction: it never says it notified when it did not."""
    title, body, kind = notice
    with transaction.atomic():
        notification = notify.notification_send(
            title=title[: Notification.TITLE_MAX],
            body=body[: Notification.BODY_MAX],
            kind=kind,
            source=source or automation.source,
        )
        return _finish(
            automation,
            run,
            status=status,
            result=result,
            error=error,
            usage=usage,
            notification=notification,
        )


def _skip_for_budget(
    automation: Automation, run: AutomationRun, reason: str, *, usage: dict[str, int] | None = None
) -> AutomationRun:
    body = f"{reason} The scheduled prompt did not run; it will try again at its next time."
    notice = (f"Skipped: {automation.name}", body, Notification.Kind.AUTOMATION)
    return _finish_with_notice(
        automation, run, notice, status=AutomationRun.Status.SKIPPED, error=reason, usage=usage
    )


def _run_prompt(automation: Automation, run: AutomationRun) -> AutomationRun:
    """The agent_prompt branch. Called with the receipt committed and no transaction open.

    The runner reserves the scheduled and the ordinary AI budget before each model call; a day
    with either one used up skips the run here, before anything is spent on it.
    """
    for kind in ("scheduled_ai", "ai"):
        if usage_remaining(kind=kind) <= 0:
            reason = f"Today's {kind.replace('_', ' ')} request budget is used up."
            return _skip_for_budget(automation, run, reason)
    usage: dict[str, int] = {}  # filled by the runner, also when it raises
    try:
        # Imported here: the runner is the agent layer's, below this one, and only this branch
        # needs it. The model call runs outside any transaction (it can take a minute).
        from agent.runner import run_scheduled_reply

        with _lease_kept(run.pk):
            reply = run_scheduled_reply(
                prompt=automation.message, source=automation.source, usage=usage
            )
    except BudgetExhausted as exc:
        return _skip_for_budget(automation, run, exc.message, usage=usage)
    except Exception as exc:
        return _run_prompt_failed(automation, run, exc, usage=usage)
    return _run_prompt_answered(automation, run, reply, usage=usage)


def _run_prompt_failed(
    automation: Automation, run: AutomationRun, exc: Exception, *, usage: dict[str, int]
) -> AutomationRun:
    """Log the failure (called while ``exc`` is being handled, so the traceback is kept), tell
    the owner and record the run as an error."""
    log.exception("Automation %s (agent_prompt) failed", automation.pk)
    error = exc.message if isinstance(exc, AppError) else f"{exc.__class__.__name__}: {exc}"
    body = f"The scheduled prompt could not finish: {error}"
    notice = (f"Failed: {automation.name}", body, Notification.Kind.ERROR)
    return _finish_with_notice(
        automation, run, notice, status=AutomationRun.Status.ERROR, error=error, usage=usage
    )


def _run_prompt_answered(
    automation: Automation, run: AutomationRun, reply: ScheduledReply, *, usage: dict[str, int]
) -> AutomationRun:
    """Save prompt and answer as a conversation the owner can continue, and send the answer
    (its notification opens it) and record the run as done, in one transaction."""
    text = reply.text.strip() or "(The model gave no answer.)"
    title = f"{automation.name} · {format_date(run.slot.astimezone(owner_zone()))}"
    notice = (automation.name, text, Notification.Kind.AUTOMATION)
    with transaction.atomic():
        run.conversation = conversation_from_automation(
            title=title, prompt=automation.message, reply=text, tool_activity=[*reply.tool_activity]
        )
        source, ok = f"conversation:{run.conversation.pk}", AutomationRun.Status.OK
        return _finish_with_notice(
            automation, run, notice, status=ok, result=text, usage=usage, source=source
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


ClaimArgs = tuple[int, dt.datetime, int]  # a claim as a run task carries it: id, slot, version


def automation_runs_together(claims: Sequence[ClaimArgs]) -> list[ClaimArgs]:
    """Run reminders' and digests' claimed slots in one transaction, as ``automation_run``
    would one by one, with writes in bulk. Returns the claims it leaves to ``automation_run``:
    a model prompt's, and a slot whose run starts a day late (it gets the missed notice).

    Exactly once, as there: the automations are locked, then the slots that already have their
    receipt are skipped; every receipt is made under its automation's lock (here, in
    ``automation_run`` and in the dispatcher), and the unique receipt still backs the check.
    All or nothing: one failing write (a receipt found taken after all, a bad row) rolls the
    chunk back and raises, and the caller runs each claim on its own.
    """
    with transaction.atomic():
        # In pk order: two chunks that share automations queue on them instead of deadlocking.
        locked = Automation.objects.select_for_update().filter(pk__in={c[0] for c in claims})
        automations = {automation.pk: automation for automation in locked.order_by("pk")}
        started = timezone.now()
        taken = set(
            AutomationRun.objects.filter(
                automation_id__in=list(automations), slot__in={c[1] for c in claims}
            ).values_list("automation_id", "slot")
        )
        alone: list[ClaimArgs] = []
        due: list[tuple[Automation, dt.datetime]] = []
        for claim in claims:
            automation_id, slot, version = claim
            automation = automations.get(automation_id)
            if (
                automation is None
                or automation.deleted_at is not None
                or automation.version != version
            ):
                log.info("Automation %s slot %s is stale; not run", automation_id, slot)
            elif (automation_id, slot) in taken:  # a redelivered chunk, or a claim listed twice
                log.info("Automation %s slot %s already ran; not run again", automation_id, slot)
            elif (
                automation.kind == Automation.Kind.AGENT_PROMPT or started - slot >= CATCH_UP_WINDOW
            ):
                alone.append(claim)
            else:
                taken.add((automation_id, slot))
                due.append((automation, slot))
        if due:
            _record_together(due, started=started)
    return alone


def _record_together(due: list[tuple[Automation, dt.datetime]], *, started: dt.datetime) -> None:
    """The notifications, the finished receipts and the automations' summaries of ``due``, in
    bulk. Call in the transaction that locked the automations."""
    zone = cache(owner_zone)  # read once, and only if a digest needs it
    outcomes = [_deterministic_outcome(a, now=started, zone=zone) for a, _ in due]
    notifications = notify.notifications_send([draft for draft, _ in outcomes])
    now = timezone.now()
    runs = AutomationRun.objects.bulk_create(
        AutomationRun(
            automation=automation,
            slot=slot,
            status=AutomationRun.Status.OK,
            started_at=started,
            finished_at=now,
            result=result[:RESULT_CHARS],
            notification=notification,
        )
        for (automation, slot), (_, result), notification in zip(
            due, outcomes, notifications, strict=True
        )
    )
    counts = Counter(automation.pk for automation, _ in due)
    # The summary: what all share in one UPDATE per count (1, unless a chunk held two slots of
    # one automation), then each one's result (bulk_update's CASE costs per row and field).
    for times in set(counts.values()):
        Automation.objects.filter(pk__in=[pk for pk, n in counts.items() if n == times]).update(
            last_run_at=now,
            last_status=Automation.Status.OK,
            last_error="",
            run_count=F("run_count") + times,
        )
    latest = {run.automation_id: run for run in sorted(runs, key=lambda run: run.slot)}
    for run in latest.values():
        run.automation.last_result = run.result
    Automation.objects.bulk_update([run.automation for run in latest.values()], ["last_result"])
    _trim_history(list(counts))
    for run in runs:
        _log_run(run)


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
