"""What every workspace service shares: time checks and the change log of the core kinds.

The kinds themselves (``TASK``, ``NOTE``, ``PROJECT``) are declared beside the services of their
data (tasks.py, notes.py, projects.py) and registered with talorys/history/kinds.py there.

No lost update: tasks, projects, notes (and memories) carry a ``version``, one more at each
change. An edit may name the version it was read at (a PATCH body, a page's hidden field, the
model's update tools); ``check_version`` refuses an older one with 409 ``CONFLICT`` and changes
nothing, so the owner's edit and the model's racing on one item end with one winner and one
refusal (tests/workspace/test_versions.py, on PostgreSQL). The version is a concurrency token, not
data: a backup does not carry it, and an import that changes an item counts one more.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.utils import timezone

from talorys.history.changes import change_record
from talorys.history.kinds import ItemKind, item_fields
from talorys.history.models import Change
from talorys.lib.actors import Actor
from talorys.lib.errors import Conflict, field_refused
from talorys.lib.validation import DATE_MAX, DATE_MIN, DATE_RANGE_TEXT


def aware(value: dt.datetime | None, *, field: str) -> dt.datetime | None:
    """``value`` when it has a time zone and lies in the range the database keeps."""
    if value is not None and timezone.is_naive(value):
        raise field_refused(
            f"{field} needs a time zone offset, e.g. 2026-12-01T09:00:00+01:00.", field=field
        )
    if value is not None and not DATE_MIN <= value < DATE_MAX:
        raise field_refused(f"{field} {DATE_RANGE_TEXT}.", field=field)
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
