"""What every workspace service shares: time checks and the change log of the core kinds.

The kinds themselves (``TASK``, ``NOTE``, ``PROJECT``) are declared beside the services of their
data (tasks.py, notes.py, projects.py) and registered with talorys/workspace/history.py there.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.db import transaction
from django.utils import timezone

from talorys.lib.actors import Actor
from talorys.lib.errors import Conflict, NotFound, ValidationFailed
from talorys.lib.validation import DATE_MAX, DATE_MIN, DATE_RANGE_TEXT
from talorys.workspace.history import (
    ItemKind,
    bin_move,
    bin_restore,
    change_record,
    item_fields,
    rows_of,
)
from talorys.workspace.models import Change


def aware(value: dt.datetime | None, *, field: str) -> dt.datetime | None:
    """``value`` when it has a time zone and lies in the range the database keeps."""
    if value is not None and timezone.is_naive(value):
        raise ValidationFailed(f"{field} needs a time zone offset, e.g. 2026-12-01T09:00:00+01:00.")
    if value is not None and not DATE_MIN <= value < DATE_MAX:
        raise ValidationFailed(f"{field} {DATE_RANGE_TEXT}.")
    return value


def check_version(obj: Any, expected: int | None, *, noun: str) -> None:
    """Refuse an edit made from an older read. Call it with the row locked (``select_for_update``)
    before the change, and count the change (``version += 1``) where it is saved: the owner's
    edit and the model's, racing on one item, are serialised by the lock and the second finds
    the version moved. ``None`` asks for no check (the edit applies to whatever is current, and
    is logged like any other)."""
    if expected is not None and expected != obj.version:
        raise Conflict(
            f"This {noun} has changed since you read it (you sent version {expected}, it is at "
            f"version {obj.version} now). Nothing was changed: read it again and redo the edit.",
            details={"version": obj.version},
        )


def record_created(kind: ItemKind, obj: Any, actor: Actor) -> None:
    change_record(
        kind=kind.name,
        obj=obj,
        action=Change.Action.CREATE,
        actor=actor,
        after=item_fields(kind, obj),
    )


def record_updated(kind: ItemKind, obj: Any, before: dict[str, Any], actor: Actor) -> None:
    change_record(
        kind=kind.name,
        obj=obj,
        action=Change.Action.UPDATE,
        actor=actor,
        before=before,
        after=item_fields(kind, obj),
    )


def record_restored(kind: ItemKind, pk: int, actor: Actor) -> None:
    obj = rows_of(kind.model).get(pk=pk)
    change_record(
        kind=kind.name,
        obj=obj,
        action=Change.Action.RESTORE,
        actor=actor,
        after=item_fields(kind, obj),
    )


def to_bin(kind: ItemKind, pk: int, actor: Actor, detail: dict[str, Any] | None = None) -> None:
    """Move a live row to the bin and record who did. Call inside a transaction or alone."""
    with transaction.atomic():
        obj = rows_of(kind.model).live().select_for_update().filter(pk=pk).first()
        if obj is None:
            raise NotFound(f"{kind.name.capitalize()} {pk} does not exist.")
        bin_move(model=kind.model, pk=pk)
        change_record(
            kind=kind.name,
            obj=obj,
            action=Change.Action.DELETE,
            actor=actor,
            before=item_fields(kind, obj),
            detail=detail,
        )


def restore_from_bin(kind: ItemKind, pk: int, actor: Actor) -> None:
    """Out of the bin, recorded as a restore by ``actor``."""
    with transaction.atomic():
        bin_restore(model=kind.model, pk=pk)
        record_restored(kind, pk, actor)
