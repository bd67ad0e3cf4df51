"""The bin: every delete, by the owner or the model, moves the item there (``deleted_at``) for
BIN_RETENTION, restorable; then it goes for good.

One function per job:
- a kind's services move its items in and out, recording who did: ``bin_move_in``,
  ``bin_move_out`` (each kind's ``<kind>_delete`` and ``<kind>_restore`` call them, or do the
  same with more of their own);
- the owner, over every kind by name: ``bin_list``, ``bin_restore``, ``bin_purge`` and
  ``bin_empty`` (purging: the owner's session only, see talorys/history/api.py);
- beat: ``bin_purge_expired``, the one purge job (talorys/history/tasks.py).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.db import models, transaction
from django.utils import timezone

from talorys.history.bin_items import BinItem, BinItems
from talorys.history.changes import change_record
from talorys.history.kinds import ItemKind, item_fields, item_kind, item_kinds, rows_of
from talorys.history.models import Change
from talorys.lib.actors import OWNER, Actor
from talorys.lib.errors import NotFound

BIN_RETENTION = dt.timedelta(days=30)


def latest_delete(kind: str, pk: int) -> Change | None:
    """The item's latest move to the bin (its detail says what a restore puts back)."""
    return (
        Change.objects.filter(kind=kind, object_id=pk, action=Change.Action.DELETE)
        .order_by("-id")
        .first()
    )


def bin_list() -> list[BinItem]:
    """Every binned item of every kind, most recently deleted first."""
    return BinItems()[:]


def bin_move_in(
    kind: ItemKind, pk: int, actor: Actor, detail: dict[str, Any] | None = None
) -> None:
    """Move a live item to the bin and record who did. Call inside a transaction or alone."""
    with transaction.atomic():
        obj = rows_of(kind.model).live().select_for_update().filter(pk=pk).first()
        if obj is None:
            raise NotFound(f"{kind.name.capitalize()} {pk} does not exist.")
        rows_of(kind.model).filter(pk=pk).update(deleted_at=timezone.now())
        change_record(
            kind=kind.name,
            obj=obj,
            action=Change.Action.DELETE,
            actor=actor,
            before=item_fields(kind, obj),
            detail=detail,
        )


def bin_move_out(kind: ItemKind, pk: int, actor: Actor) -> Any:
    """Bring a binned item back, recorded as a restore by ``actor``. Returns the item."""
    with transaction.atomic():
        rows = rows_of(kind.model)
        if not rows.filter(pk=pk, deleted_at__isnull=False).update(deleted_at=None):
            raise NotFound(f"The {kind.name} is no longer in the bin.")
        obj = rows.get(pk=pk)
        change_record(
            kind=kind.name,
            obj=obj,
            action=Change.Action.RESTORE,
            actor=actor,
            after=item_fields(kind, obj),
        )
    return obj


def bin_restore(*, kind: str, pk: int, actor: Actor = OWNER) -> None:
    """Bring one binned item of any kind back as it was, through its kind's restore."""
    spec = item_kind(kind)
    with transaction.atomic():
        # Locked: a purge of the same item waits, then finds it no longer in the bin.
        obj = (
            rows_of(spec.model).select_for_update().filter(pk=pk, deleted_at__isnull=False).first()
        )
        if obj is None:
            raise NotFound(f"The {kind} {pk} is no longer in the bin.")
        spec.restore(pk=pk, actor=actor, change=latest_delete(kind, pk))


def _purge(spec: ItemKind, rows: models.QuerySet) -> int:
    ids = list(rows.values_list("pk", flat=True))
    count, _ = rows_of(spec.model).filter(pk__in=ids).delete()
    # Purged for good: its revisions hold its content, so they go too.
    Change.objects.filter(kind=spec.name, object_id__in=ids).delete()
    return len(ids) if count else 0


def bin_purge(*, kind: str, pk: int) -> None:
    """Delete one binned item for good (the owner's session only; see talorys/history/api.py)."""
    spec = item_kind(kind)
    with transaction.atomic():
        # Locked and re-checked: a restore that committed first wins, and this finds nothing.
        rows = rows_of(spec.model).select_for_update().filter(pk=pk, deleted_at__isnull=False)
        if not _purge(spec, rows):
            raise NotFound(f"There is no {kind} {pk} in the bin.")


def bin_empty() -> int:
    """Delete everything in the bin for good. Returns how many items."""
    return _purge_binned_before(timezone.now())


def bin_purge_expired(*, older_than: dt.timedelta = BIN_RETENTION) -> int:
    """Delete for good what has been in the bin longer than ``older_than``, of every kind:
    the one purge job beat runs (talorys/history/tasks.py). Returns how many items."""
    return _purge_binned_before(timezone.now() - older_than)


def _purge_binned_before(cutoff: dt.datetime) -> int:
    purged = 0
    for spec in item_kinds():
        with transaction.atomic():
            rows = rows_of(spec.model).select_for_update().filter(deleted_at__lte=cutoff)
            purged += _purge(spec, rows)
    return purged
