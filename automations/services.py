"""Everything that changes automations: the owner's edits, the dispatcher and the run of a slot.

Exactly one run per (automation, slot):

1. ``automations_dispatch`` (beat, every few seconds) locks due rows with
   ``SELECT ... FOR UPDATE SKIP LOCKED`` and moves ``next_run_at`` past now in the same
   transaction: concurrent dispatchers take disjoint rows, and a committed claim is never due
   again. The run task is enqueued on commit, carrying the automation's ``version``.
2. ``automation_run`` locks the automation, ignores the task when the version moved on (paused,
   resumed, rescheduled, cancelled or deleted since the claim), and creates the receipt
   (AutomationRun, unique per automation and slot) before any work. A redelivered or duplicated
   task finds the receipt and does nothing.
   - ``reminder`` and ``task_digest`` write receipt, notification and outcome in ONE
     transaction: all or nothing, so a crash before commit leaves nothing behind and the
     redelivered task (acks_late) does the work.
   - ``agent_prompt`` commits the receipt first, because the model call must not run inside a
     transaction. While the call runs, the worker renews the receipt's lease (``RUN_LEASE``). A
     crash during the call leaves a ``running`` receipt whose lease runs out: housekeeping, or
     the automation's next slot, marks it interrupted; it is never re-run, since the model may
     already have told the owner something.
3. One run at a time per automation: a slot that comes while the automation's previous run is
   still in progress (lease live) gets a "skipped" receipt saying so, and is not run.

Missed slots (workers down): the dispatcher runs the latest missed slot once if it is less than
24 hours old (``CATCH_UP_WINDOW``; slots in between are folded into that one run). A slot older
than that is not run: it gets a "skipped" receipt and a notification, and the schedule is
re-armed from now. A worker runs the dispatcher when it starts, so catch-up happens at start.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any
from zoneinfo import ZoneInfo

from django.db import IntegrityError, connection, transaction
from django.db.models import F, Q, Subquery
from django.utils import timezone

from automations.models import Automation, AutomationRun
from automations.schedules import Schedule, describe, next_after, schedule_dump, schedule_parse
from talorys.lib.actors import OWNER, Actor
from talorys.lib.errors import AppError, BudgetExhausted, Conflict, NotFound, ValidationFailed
from talorys.lib.validation import clean_text
from talorys.notifications import services as notify
from talorys.notifications.models import Notification
from talorys.workspace import history as core_services
from talorys.workspace import selectors as core_selectors
from talorys.workspace import services
from talorys.workspace.history import ItemKind, bin_purge, change_record, item_fields, register_kind
from talorys.workspace.models import Change, Task
from talorys.workspace.services import owner_zone

log = logging.getLogger(__name__)

CATCH_UP_WINDOW = dt.timedelta(hours=24)
MAX_RUNS_KEPT = 50
DISPATCH_BATCH = 200
DISPATCH_MAX_BATCHES = 50
# Receipts made before leases existed have none: their age decides (longer than any run takes).
INTERRUPTED_AFTER = dt.timedelta(minutes=30)
# A running receipt's lease, renewed every RUN_LEASE_RENEW by the worker doing the run: a worker
# that died is noticed within RUN_LEASE, one that is merely slow keeps its run.
RUN_LEASE = dt.timedelta(minutes=2)
RUN_LEASE_RENEW = dt.timedelta(seconds=30)
OVERLAP_ERROR = "skipped: previous run still in progress"
INTERRUPTED_ERROR = "Interrupted: the worker stopped during the run. It was not retried."
BIN_RETENTION = core_services.BIN_RETENTION
MAX_NAME = 200
MAX_MESSAGE = 4_000
DIGEST_ITEMS = 20  # tasks listed per digest section
RESULT_CHARS = 2_000

Kind = Automation.Kind
RunStatus = AutomationRun.Status


def _message(kind: str, message: str | None) -> str:
    # The prompt is the whole point of an agent_prompt; a reminder may just use its name.
    return clean_text(
        message, field="message", max_length=MAX_MESSAGE, required=kind == Kind.AGENT_PROMPT
    )


def _lock(automation_id: int) -> Automation:
    """The live automation, locked. Call inside a transaction."""
    automation = Automation.objects.live().select_for_update().filter(pk=automation_id).first()
    if automation is None:
        raise NotFound(f"Automation {automation_id} does not exist.")
    return automation


def _first_slot(schedule: Schedule, *, now: dt.datetime, zone: ZoneInfo) -> dt.datetime:
    slot = next_after(schedule, now, zone)
    if slot is None:
        raise ValidationFailed("schedule.at: that time has passed; give a time in the future.")
    return slot


# --- the owner's changes -----------------------------------------------------------------------


def automation_create(
    *,
    name: str,
    kind: str,
    schedule: Schedule | dict[str, Any],
    message: str = "",
    enabled: bool = True,
    origin: str = Automation.Origin.OWNER,
    actor: Actor = OWNER,
) -> Automation:
    """Create an automation, armed for its first slot. Imported ones always start paused."""
    if kind not in Kind.values:
        raise ValidationFailed(f"kind must be one of {', '.join(Kind.values)}.")
    if origin not in Automation.Origin.values:
        raise ValidationFailed(f"origin must be one of {', '.join(Automation.Origin.values)}.")
    name = clean_text(name, field="name", max_length=MAX_NAME, required=True)
    message = _message(kind, message)
    parsed = schedule_parse(schedule)
    if origin == Automation.Origin.IMPORT:
        # An imported prompt must not start running on its own (the seed report's fence).
        enabled = False
    zone = owner_zone()
    next_run_at = _first_slot(parsed, now=timezone.now(), zone=zone) if enabled else None
    with transaction.atomic():
        automation = Automation.objects.create(
            name=name,
            kind=kind,
            message=message,
            schedule=schedule_dump(parsed),
            enabled=enabled,
            origin=origin,
            next_run_at=next_run_at,
            armed_time_zone=zone.key if enabled else "",
        )
        _changed(automation, Change.Action.CREATE, actor, before=None)
    return automation


def _changed(
    automation: Automation, action: str, actor: Actor, *, before: dict[str, Any] | None
) -> None:
    """Record a change of the automation's content (talorys/workspace/history.py)."""
    change_record(
        kind=AUTOMATION.name,
        obj=automation,
        action=action,
        actor=actor,
        before=before,
        after=None if action == Change.Action.DELETE else item_fields(AUTOMATION, automation),
    )


UPDATABLE = {"name", "message", "schedule"}


def automation_update(*, automation_id: int, actor: Actor = OWNER, **changes: Any) -> Automation:
    """Change name, message or schedule. A new schedule voids queued runs and re-arms."""
    unknown = set(changes) - UPDATABLE
    if unknown:
        raise ValidationFailed(f"Cannot change {', '.join(sorted(unknown))} here.")
    with transaction.atomic():
        automation = _lock(automation_id)
        before = item_fields(AUTOMATION, automation)
        if "name" in changes:
            automation.name = clean_text(
                changes["name"], field="name", max_length=MAX_NAME, required=True
            )
        if "message" in changes:
            automation.message = _message(automation.kind, changes["message"])
        if "schedule" in changes:
            if changes["schedule"] is None:
                raise ValidationFailed("schedule must not be null.")
            parsed = schedule_parse(changes["schedule"])
            automation.schedule = schedule_dump(parsed)
            automation.version += 1
            if automation.enabled:
                zone = owner_zone()
                automation.next_run_at = _first_slot(parsed, now=timezone.now(), zone=zone)
                automation.armed_time_zone = zone.key
        automation.save()
        _changed(automation, Change.Action.UPDATE, actor, before=before)
    return automation


def automation_pause(*, automation_id: int, actor: Actor = OWNER) -> Automation:
    with transaction.atomic():
        automation = _lock(automation_id)
        if automation.cancelled_at is not None:
            raise Conflict("This automation was cancelled; it cannot be paused or resumed.")
        if automation.enabled:
            before = item_fields(AUTOMATION, automation)
            automation.enabled = False
            automation.next_run_at = None
            automation.version += 1  # a run already queued for this automation is now stale
            automation.save()
            _changed(automation, Change.Action.UPDATE, actor, before=before)
    return automation


def automation_resume(*, automation_id: int, actor: Actor = OWNER) -> Automation:
    """Enable again from now on: slots that passed while paused are not run."""
    with transaction.atomic():
        automation = _lock(automation_id)
        if automation.cancelled_at is not None:
            raise Conflict("This automation was cancelled; it cannot be paused or resumed.")
        if not automation.enabled:
            zone = owner_zone()
            next_run_at = next_after(schedule_parse(automation.schedule), timezone.now(), zone)
            if next_run_at is None:
                raise Conflict("Its one time has passed; give it a new schedule to run it again.")
            before = item_fields(AUTOMATION, automation)
            automation.enabled = True
            automation.next_run_at = next_run_at
            automation.armed_time_zone = zone.key
            automation.version += 1
            automation.save()
            _changed(automation, Change.Action.UPDATE, actor, before=before)
    return automation


def automation_delete(*, automation_id: int, actor: Actor = OWNER) -> None:
    """To the bin like every delete (restorable for BIN_RETENTION), and it stops running."""
    automation_trash(automation_id=automation_id, actor=actor)


def automation_trash(*, automation_id: int, actor: Actor = OWNER) -> Automation:
    """To the bin (restorable for BIN_RETENTION), and it stops running."""
    with transaction.atomic():
        automation = _lock(automation_id)
        before = item_fields(AUTOMATION, automation)
        automation.deleted_at = timezone.now()
        automation.version += 1  # a run already queued for it is now stale
        automation.save()
        _changed(automation, Change.Action.DELETE, actor, before=before)
    return automation


def automation_restore(*, automation_id: int, actor: Actor = OWNER) -> Automation:
    """Out of the bin, re-armed from now (a one-time automation whose time passed stays off)."""
    with transaction.atomic():
        automation = (
            Automation.objects.select_for_update()
            .filter(pk=automation_id, deleted_at__isnull=False)
            .first()
        )
        if automation is None:
            raise NotFound(f"Automation {automation_id} is not in the bin.")
        automation.deleted_at = None
        automation.version += 1
        if automation.enabled:
            zone = owner_zone()
            automation.next_run_at = next_after(
                schedule_parse(automation.schedule), timezone.now(), zone
            )
            automation.armed_time_zone = zone.key
            automation.enabled = automation.next_run_at is not None
        automation.save()
        _changed(automation, Change.Action.RESTORE, actor, before=None)
    return automation


def automation_cancel(*, automation_id: int) -> Automation:
    """An approved cancellation: disabled for good (the owner can undo it within 30 days)."""
    with transaction.atomic():
        automation = _lock(automation_id)
        if automation.cancelled_at is not None:
            raise Conflict("This automation is already cancelled.")
        automation.cancelled_at = timezone.now()
        automation.enabled = False
        automation.next_run_at = None
        automation.version += 1
        automation.save()
    return automation


def automation_uncancel(*, automation_id: int) -> Automation:
    """Undo a cancellation. It comes back paused: the owner resumes it when they want."""
    with transaction.atomic():
        automation = _lock(automation_id)
        if automation.cancelled_at is None:
            raise Conflict("This automation is not cancelled.")
        automation.cancelled_at = None
        automation.version += 1
        automation.save()
    return automation


# --- dispatch ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Claim:
    """One slot of one automation, claimed by the dispatcher, to be run by one task."""

    automation_id: int
    slot: dt.datetime
    version: int


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
                status=RunStatus.SKIPPED,
                started_at=now,
                finished_at=now,
                error=error,
            )
    except IntegrityError:  # this slot already has its receipt
        return
    run.notification = notify.notification_send(
        title=f"Missed: {automation.name}"[:300],
        body=f"It was due {_local(slot, zone)}. {error}",
        kind=Notification.Kind.AUTOMATION,
        source=f"automation:{automation.pk}",
    )
    run.save(update_fields=["notification"])
    Automation.objects.filter(pk=automation.pk).update(
        last_run_at=now, last_status=Automation.Status.SKIPPED, last_error=error
    )


def _enqueue(claims: list[tuple[Claim, dt.datetime | None]]) -> None:
    """Send the run tasks of a committed batch, over one broker connection. A claim the broker
    refuses gets its slot handed back, so that a later tick claims it again instead of losing it.
    """
    from automations.tasks import run_automation  # tasks import this module

    with run_automation.app.producer_or_acquire() as producer:
        for claim, advanced_to in claims:
            try:
                run_automation.apply_async(
                    (claim.automation_id, claim.slot.isoformat(), claim.version),
                    producer=producer,
                )
            except Exception:
                log.exception(
                    "Could not enqueue automation %s slot %s", claim.automation_id, claim.slot
                )
                Automation.objects.filter(
                    pk=claim.automation_id, version=claim.version, next_run_at=advanced_to
                ).update(next_run_at=claim.slot, enabled=True)


def _dispatch_batch(*, now: dt.datetime, zone: ZoneInfo, batch: int) -> tuple[int, list[Claim]]:
    claims: list[Claim] = []
    to_enqueue: list[tuple[Claim, dt.datetime | None]] = []
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
                claim = Claim(automation.pk, run_slot, automation.version)
                claims.append(claim)
                to_enqueue.append((claim, upcoming))
        # One UPDATE per distinct next slot: automations due together mostly share the next one.
        for upcoming, pks in advanced.items():
            # A one-time automation, or one whose schedule has no more dates, is done.
            Automation.objects.filter(pk__in=pks).update(
                next_run_at=upcoming, enabled=upcoming is not None, updated_at=now
            )
        if to_enqueue:
            transaction.on_commit(partial(_enqueue, to_enqueue))
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


def automations_dispatch(
    *, now: dt.datetime | None = None, batch: int = DISPATCH_BATCH
) -> list[Claim]:
    """Claim every due automation, advance it and enqueue one run per claimed slot.

    Safe to run concurrently with itself, on PostgreSQL (row locks) and on SQLite (one writer).
    Returns the claims this call made.
    """
    now = now or timezone.now()
    zone = owner_zone()
    _rearm_for_time_zone(now=now, zone=zone)
    claims: list[Claim] = []
    for _ in range(DISPATCH_MAX_BATCHES):
        seen, batch_claims = _dispatch_batch(now=now, zone=zone, batch=batch)
        claims += batch_claims
        if seen < batch:
            break
    return claims


# --- running a slot ----------------------------------------------------------------------------


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
    counted = {"run_count": F("run_count") + 1} if status != RunStatus.SKIPPED else {}
    Automation.objects.filter(pk=automation.pk).update(
        last_run_at=now,
        last_status=status,
        last_result=run.result,
        last_error=run.error,
        **counted,
    )
    runs = AutomationRun.objects.filter(automation_id=automation.pk)
    keep = runs.order_by("-slot").values("pk")[:MAX_RUNS_KEPT]
    runs.exclude(pk__in=Subquery(keep)).exclude(status=RunStatus.RUNNING).delete()
    return run


def _source(automation: Automation) -> str:
    return f"automation:{automation.pk}"


def _task_line(task: Task, zone: ZoneInfo) -> str:
    due = task.due_at.astimezone(zone)
    flag = " (high priority)" if task.priority == Task.Priority.HIGH else ""
    return f"- {task.title} — due {due:%a %d %b %H:%M}{flag}"


def _section(heading: str, tasks: list[Task], total: int, zone: ZoneInfo) -> list[str]:
    lines = [f"{heading} ({total}):", *(_task_line(t, zone) for t in tasks)]
    if total > len(tasks):
        lines.append(f"- …and {total - len(tasks)} more")
    return lines


def task_digest_text(
    *, name: str, heading: str, now: dt.datetime, zone: ZoneInfo
) -> tuple[str, str]:
    """(title, body) summarising open tasks that are overdue or due by the end of the owner's
    local day. Deterministic: the same tasks at the same time give the same text."""
    local_now = now.astimezone(zone)
    end_of_day = dt.datetime.combine(local_now.date() + dt.timedelta(days=1), dt.time()).replace(
        tzinfo=zone
    )
    open_tasks = core_selectors.task_list(status=Task.Status.OPEN).order_by(
        "due_at", "-priority", "pk"
    )
    overdue = open_tasks.filter(due_at__lt=now)
    today = open_tasks.filter(due_at__gte=now, due_at__lt=end_of_day)
    n_overdue, n_today = overdue.count(), today.count()
    if not n_overdue and not n_today:
        title = f"{name}: nothing due today"
        lines = ["No open task is overdue or due today."]
    else:
        title = f"{name}: {n_overdue} overdue, {n_today} due today"
        lines = []
        if n_overdue:
            lines += _section("Overdue", list(overdue[:DIGEST_ITEMS]), n_overdue, zone)
        if n_today:
            if lines:
                lines.append("")
            lines += _section("Due today", list(today[:DIGEST_ITEMS]), n_today, zone)
    if heading:
        lines = [heading, "", *lines]
    return title[:300], "\n".join(lines)


def _run_deterministic(automation: Automation, run: AutomationRun) -> AutomationRun:
    if automation.kind == Kind.REMINDER:
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
        title=title, body=body, kind=kind, source=_source(automation)
    )
    return _finish(automation, run, status=RunStatus.OK, result=result, notification=notification)


def _skip_for_budget(
    automation: Automation, run: AutomationRun, reason: str, *, usage: dict[str, int] | None = None
) -> AutomationRun:
    with transaction.atomic():
        notification = notify.notification_send(
            title=f"Skipped: {automation.name}"[:300],
            body=f"{reason} The scheduled prompt did not run; it will try again at its next time.",
            kind=Notification.Kind.AUTOMATION,
            source=_source(automation),
        )
        return _finish(
            automation,
            run,
            status=RunStatus.SKIPPED,
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
                prompt=automation.message, source=_source(automation), usage=usage
            )
    except BudgetExhausted as exc:
        return _skip_for_budget(automation, run, exc.message, usage=usage)
    except Exception as exc:
        log.exception("Automation %s (agent_prompt) failed", automation.pk)
        error = exc.message if isinstance(exc, AppError) else f"{exc.__class__.__name__}: {exc}"
        with transaction.atomic():
            notification = notify.notification_send(
                title=f"Failed: {automation.name}"[:300],
                body=f"The scheduled prompt could not finish: {error}"[:10_000],
                kind=Notification.Kind.ERROR,
                source=_source(automation),
            )
            return _finish(
                automation,
                run,
                status=RunStatus.ERROR,
                error=error,
                usage=usage,
                notification=notification,
            )
    reply = (reply or "").strip() or "(The model gave no answer.)"
    with transaction.atomic():
        notification = notify.notification_send(
            title=automation.name,
            body=reply[:10_000],
            kind=Notification.Kind.AUTOMATION,
            source=_source(automation),
        )
        return _finish(
            automation,
            run,
            status=RunStatus.OK,
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
        if _in_progress(automation, now=started, exclude=run.pk):
            log.info("Automation %s slot %s skipped: a run is in progress", automation_id, slot)
            return _finish(automation, run, status=RunStatus.SKIPPED, error=OVERLAP_ERROR)
        if started - slot >= CATCH_UP_WINDOW:  # the queue held it that long: too late to act
            error = "Its run started more than 24 hours late, so it was not run."
            notification = notify.notification_send(
                title=f"Missed: {automation.name}"[:300],
                body=f"It was due {_local(slot, owner_zone())}. {error}",
                kind=Notification.Kind.AUTOMATION,
                source=_source(automation),
            )
            return _finish(
                automation, run, status=RunStatus.SKIPPED, error=error, notification=notification
            )
        if automation.kind != Kind.AGENT_PROMPT:
            return _run_deterministic(automation, run)
    return _run_prompt(automation, run)


# --- housekeeping ------------------------------------------------------------------------------


def _lost(now: dt.datetime) -> Q:
    """Running receipts whose worker is gone: lease run out, or (no lease) too old."""
    return Q(lease_until__lt=now) | Q(
        lease_until__isnull=True, started_at__lt=now - INTERRUPTED_AFTER
    )


def _reap(run: AutomationRun, automation: Automation, *, now: dt.datetime) -> bool:
    """Close one lost receipt as interrupted and tell the owner. Call inside a transaction."""
    claimed = (
        AutomationRun.objects.filter(pk=run.pk, status=RunStatus.RUNNING)
        .filter(_lost(now))
        .update(status=RunStatus.ERROR, finished_at=now, error=INTERRUPTED_ERROR, lease_until=None)
    )
    if not claimed:  # finished, or renewed by its worker, since it was read
        return False
    notification = notify.notification_send(
        title=f"Interrupted: {automation.name}"[:300],
        body=INTERRUPTED_ERROR,
        kind=Notification.Kind.ERROR,
        source=_source(automation),
    )
    AutomationRun.objects.filter(pk=run.pk).update(notification=notification)
    Automation.objects.filter(pk=automation.pk).update(
        last_status=Automation.Status.ERROR, last_error=INTERRUPTED_ERROR
    )
    return True


def _in_progress(automation: Automation, *, now: dt.datetime, exclude: int) -> bool:
    """Whether another run of the (locked) automation is in progress; a lost one is reaped
    here, so a dead worker holds up the next slot no longer than its lease."""
    running = AutomationRun.objects.filter(
        automation_id=automation.pk, status=RunStatus.RUNNING
    ).exclude(pk=exclude)
    for run in running.filter(_lost(now)):
        _reap(run, automation, now=now)
    return running.exists()


@contextmanager
def _lease_kept(run_id: int) -> Iterator[None]:
    """Renew the running receipt's lease from a side thread while the block runs (the model
    call blocks this one). The thread stops with the block, so a dead worker renews nothing."""
    stop = threading.Event()

    def renew() -> None:
        try:
            while not stop.wait(RUN_LEASE_RENEW.total_seconds()):
                AutomationRun.objects.filter(pk=run_id, status=RunStatus.RUNNING).update(
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


def automation_runs_reap(*, now: dt.datetime | None = None) -> int:
    """Close receipts whose worker died mid-run (a scheduled prompt): recorded as errors and
    told to the owner, not re-run. Returns how many."""
    now = now or timezone.now()
    reaped = 0
    lost = AutomationRun.objects.filter(status=RunStatus.RUNNING).filter(_lost(now))
    for run in lost.select_related("automation"):
        with transaction.atomic():
            reaped += _reap(run, run.automation, now=now)
    return reaped


def automations_bin_purge(*, now: dt.datetime | None = None) -> int:
    """Delete for good automations that have been in the bin longer than BIN_RETENTION."""
    older_than = BIN_RETENTION - ((now or timezone.now()) - timezone.now())
    return bin_purge(older_than=older_than, kinds=[AUTOMATION.name])


def _automation_apply(*, pk: int, values: dict[str, Any], actor: Actor) -> None:
    """Write old content back: name, message and schedule, then paused or running as it was."""
    content = {key: values[key] for key in UPDATABLE if key in values}
    automation_update(automation_id=pk, actor=actor, **content)
    if values.get("enabled") is False:
        automation_pause(automation_id=pk, actor=actor)
    elif values.get("enabled") is True:
        automation_resume(automation_id=pk, actor=actor)


AUTOMATION = ItemKind(
    name="automation",
    model=Automation,
    fields=("name", "message", "schedule", "enabled"),
    title=lambda automation: automation.name,
    restore=lambda *, pk, actor, change: automation_restore(automation_id=pk, actor=actor),
    bin=lambda *, pk, actor: automation_trash(automation_id=pk, actor=actor),
    apply=_automation_apply,
)
register_kind(AUTOMATION)


def schedule_text(automation: Automation, zone: ZoneInfo | None = None) -> str:
    try:
        schedule = schedule_parse(automation.schedule)
    except ValidationFailed as exc:  # a hand edit in the admin; the dispatcher pauses it
        return f"invalid schedule ({exc.message})"
    return describe(schedule, zone or owner_zone())
