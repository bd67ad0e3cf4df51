"""The owner's changes to automations: create, update, pause, resume, the bin, cancel.

Each change that should void runs already queued bumps ``version`` (see
automations/services/__init__.py); each change of content is recorded in the change log, and
automations are a kind of item in the bin (``AUTOMATION``, talorys/history/kinds.py).
"""

from __future__ import annotations

import datetime as dt
from typing import Any, TypedDict, Unpack
from zoneinfo import ZoneInfo

from django.db import transaction
from django.utils import timezone

from automations.models import Automation
from talorys.history.changes import change_record
from talorys.history.kinds import ItemKind, item_fields, register_kind
from talorys.history.models import Change
from talorys.lib.actors import OWNER, Actor
from talorys.lib.errors import Conflict, Forbidden, NotFound, ValidationFailed, field_refused
from talorys.lib.schedules import Once, Schedule, next_after, schedule_dump, schedule_parse
from talorys.lib.updates import model_update
from talorys.lib.validation import clean_line, clean_text
from talorys.owner.selectors import owner_zone

Kind = Automation.Kind


def _message(kind: str, message: str | None) -> str:
    # The prompt is the whole point of an agent_prompt; a reminder may just use its name.
    return clean_text(
        message or "",
        field="message",
        max_length=Automation.MESSAGE_MAX,
        required=kind == Kind.AGENT_PROMPT,
    )


class UnwatchedSpending(Forbidden):
    """A repeating scheduled prompt spends the owner's model budget at every run while nobody
    watches: only the owner's session creates one, changes what or when it runs, resumes it or
    restores it from the bin. A token (a script holds it) and the model are refused; the model
    proposes one with schedule_agent_prompt (automations/tools.py), whose approval creates it,
    and an imported prompt, which arrives paused, stays paused until the owner resumes it."""


def _check_unwatched_spending(actor: Actor, *, kind: str, schedule: Schedule) -> None:
    """Refuse ``actor`` a repeating prompt it may not start (UnwatchedSpending). Called under
    the automation's row lock where one exists, with the schedule it holds there, so a check and
    the change it allows see the same row."""
    if kind != Kind.AGENT_PROMPT or isinstance(schedule, Once):
        return
    if actor.is_token:
        raise UnwatchedSpending(
            "A repeating scheduled prompt spends the owner's model budget at every run: "
            "creating, changing, resuming or restoring one needs the owner's session, "
            "not an API token."
        )
    if actor.is_model:
        raise UnwatchedSpending(
            "A repeating scheduled prompt spends the owner's model budget at every run: only "
            "the owner creates, changes, resumes or restores one; the model may propose one "
            "for their approval."
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
        raise field_refused(
            "schedule.at: that time has passed; give a time in the future.", field="schedule"
        )
    return slot


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
        raise field_refused(f"kind must be one of {', '.join(Kind.values)}.", field="kind")
    if origin not in Automation.Origin.values:
        raise field_refused(
            f"origin must be one of {', '.join(Automation.Origin.values)}.", field="origin"
        )
    name = clean_line(name, field="name", max_length=Automation.NAME_MAX, required=True)
    message = _message(kind, message)
    parsed = schedule_parse(schedule)
    _check_unwatched_spending(actor, kind=kind, schedule=parsed)
    if origin == Automation.Origin.IMPORT:
        # An imported prompt must not start running on its own: it waits, disabled, for the owner.
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
    """Record a change of the automation's content (talorys/history/changes.py)."""
    change_record(
        kind=AUTOMATION.name,
        obj=automation,
        action=action,
        actor=actor,
        before=before,
        after=None if action == Change.Action.DELETE else item_fields(AUTOMATION, automation),
    )


class AutomationChanges(TypedDict, total=False):
    """What automation_update may change; the kind is fixed once made."""

    name: str
    message: str | None
    schedule: Schedule | dict[str, Any] | None


UPDATABLE = AutomationChanges.__optional_keys__


def _automation_clean(automation: Automation, changes: AutomationChanges) -> dict[str, Any]:
    """The sent fields, cleaned; a new schedule voids queued runs and re-arms an enabled one."""
    data: dict[str, Any] = {}
    if "name" in changes:
        data["name"] = clean_line(
            changes["name"], field="name", max_length=Automation.NAME_MAX, required=True
        )
    if "message" in changes:
        data["message"] = _message(automation.kind, changes["message"])
    if "schedule" in changes:
        if changes["schedule"] is None:
            raise field_refused("schedule must not be null.", field="schedule")
        parsed = schedule_parse(changes["schedule"])
        data["schedule"] = schedule_dump(parsed)
        data["version"] = automation.version + 1
        if automation.enabled:
            zone = owner_zone()
            data["next_run_at"] = _first_slot(parsed, now=timezone.now(), zone=zone)
            data["armed_time_zone"] = zone.key
    return data


# The columns automation_update writes: the changes, and what a new schedule moves with it.
_AUTOMATION_COLUMNS = ("name", "message", "schedule", "version", "next_run_at", "armed_time_zone")


def automation_update(
    *, automation_id: int, actor: Actor = OWNER, **changes: Unpack[AutomationChanges]
) -> Automation:
    """Change name, message or schedule. A new schedule voids queued runs and re-arms."""
    unknown = set(changes) - UPDATABLE
    if unknown:
        raise ValidationFailed(f"Cannot change {', '.join(sorted(unknown))} here.")
    with transaction.atomic():
        automation = _lock(automation_id)
        before = item_fields(AUTOMATION, automation)
        data = _automation_clean(automation, changes)
        if changes.keys() & {"message", "schedule"}:
            schedule = schedule_parse(data.get("schedule", automation.schedule))
            _check_unwatched_spending(actor, kind=automation.kind, schedule=schedule)
        model_update(instance=automation, fields=_AUTOMATION_COLUMNS, data=data)
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
            schedule = schedule_parse(automation.schedule)
            _check_unwatched_spending(actor, kind=automation.kind, schedule=schedule)
            zone = owner_zone()
            next_run_at = next_after(schedule, timezone.now(), zone)
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


def automation_delete(*, automation_id: int, actor: Actor = OWNER) -> Automation:
    """To the bin like every delete (restorable for BIN_RETENTION), and it stops running."""
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
        if automation.enabled:  # it runs again, as a resume would start it
            schedule = schedule_parse(automation.schedule)
            _check_unwatched_spending(actor, kind=automation.kind, schedule=schedule)
            zone = owner_zone()
            automation.next_run_at = next_after(schedule, timezone.now(), zone)
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
    delete=lambda *, pk, actor: automation_delete(automation_id=pk, actor=actor),
    apply=_automation_apply,
)
register_kind(AUTOMATION)
