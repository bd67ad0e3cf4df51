"""What every workspace service shares: time checks, and the create and the edit of the core
kinds with their change log.

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
from collections.abc import Callable, Mapping
from typing import Any

from django.db import transaction
from django.utils import timezone

from talorys.history.changes import change_record
from talorys.history.kinds import ItemKind, item_fields, rows_of
from talorys.history.models import Change
from talorys.lib.actors import Actor
from talorys.lib.errors import Conflict, NotFound, field_refused
from talorys.lib.updates import model_update
from talorys.lib.validation import DATE_MAX, DATE_MIN, DATE_RANGE_TEXT, clean_line, clean_text


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


def item_texts(
    changes: Mapping[str, Any], line: tuple[str, int], text: tuple[str, int]
) -> dict[str, Any]:
    """A kind's one-line field (its title or name: required) and its text (``None`` or "" is
    empty), each checked when sent; ``(name, max_length)`` each."""
    data: dict[str, Any] = {}
    if line[0] in changes:
        data[line[0]] = clean_line(changes[line[0]], field=line[0], max_length=line[1])
    if text[0] in changes:
        value = changes[text[0]] or ""
        data[text[0]] = clean_text(value, field=text[0], max_length=text[1], required=False)
    return data


def item_create(kind: ItemKind, actor: Actor, data: dict[str, Any]) -> Any:
    """A new row of ``kind`` from the cleaned ``data``, logged as created."""
    with transaction.atomic():
        obj = rows_of(kind.model).create(**data)
        change_record(
            kind=kind.name,
            obj=obj,
            action=Change.Action.CREATE,
            actor=actor,
            after=item_fields(kind, obj),
        )
    return obj


def item_edit(
    kind: ItemKind,
    pk: int,
    *,
    actor: Actor,
    data: Callable[[Any], dict[str, Any]],
    version: int | None = None,
    columns: tuple[str, ...] = (),
) -> Any:
    """Write ``data(row)`` to the live row of ``kind``: its content fields and ``columns``.
    Locked, so that the change log's "before" is what this edit replaced and two edits never
    lose each other's change. ``version``: see ``check_version``. Every call counts as an edit
    (a new version and a change log entry), even one that changes nothing."""
    with transaction.atomic():
        obj = rows_of(kind.model).live().select_for_update().filter(pk=pk).first()
        if obj is None:
            raise NotFound(f"{kind.name.capitalize()} {pk} does not exist.")
        check_version(obj, version, noun=kind.name)
        before = item_fields(kind, obj)
        values = data(obj) | {"version": obj.version + 1}
        model_update(instance=obj, fields=(*kind.fields, *columns, "version"), data=values)
        change_record(
            kind=kind.name,
            obj=obj,
            action=Change.Action.UPDATE,
            actor=actor,
            before=before,
            after=item_fields(kind, obj),
        )
    return obj
