"""Nothing is lost: the bin for every delete, and the revisions of every change.

Every kind of item the owner keeps registers here once (``register_kind``): its model (with
``deleted_at``), its content fields, and the services that restore it and apply old content.
The workspace's kinds register in talorys/workspace/services/ (tasks, notes, projects); memory,
automations and agent register theirs when they load, so the workspace never imports an app
above it.

- Services record each change with ``change_record`` in the transaction that makes it: who
  (``Actor``), the turn that made it, the content fields before and after.
- Every delete, by the owner or the model, moves the item to the bin (``deleted_at``). The bin
  keeps it BIN_RETENTION; ``bin_restore_item`` brings it back, ``bin_purge_item``/``bin_empty``
  (the owner's session only) and ``bin_purge`` (beat, after the retention) delete it for good.
- ``change_revert`` applies a change's ``before`` only while the item still holds its
  ``after``, under the item's row lock; the revert is recorded as revisions of its own.
- ``SoftDeleteTool`` is the destructive tool whose commit moves one item to the bin, for every
  app's delete tools.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from django.db import models, transaction
from django.utils import timezone

from talorys.lib.actors import OWNER, Actor
from talorys.lib.errors import AppError, Conflict, NotFound, ValidationFailed
from talorys.lib.tools import Permission, Proposal, Tool, ToolContext, snapshot_hash
from talorys.workspace.models import Change, LiveQuerySet

BIN_RETENTION = dt.timedelta(days=30)

# The sources whose changes /api/changes and /changes/ list: what the model did, in chat or
# scheduled, and what a backup import changed in items already here (backup/importer.py).
CHANGE_LOG_SOURCES = (
    models.Q(source="chat") | models.Q(source__startswith="automation") | models.Q(source="import")
)


@dataclass(frozen=True)
class ItemKind:
    name: str  # "task", as in /api/bin/task/1
    model: type[models.Model]
    fields: tuple[str, ...]  # the content fields a revision keeps
    title: Callable[[Any], str]
    # restore(pk=, actor=, change=): out of the bin, recording the restore; ``change`` is the
    # latest delete, if any.
    restore: Callable[..., Any]
    # bin(pk=, actor=): into the bin, recording the delete.
    bin: Callable[..., Any]
    # apply(pk=, values=, actor=): write old content through the kind's service (which records
    # it). None: the kind keeps no revertable content.
    apply: Callable[..., Any] | None = None


_KINDS: dict[str, ItemKind] = {}


def rows_of(model: type[models.Model]) -> LiveQuerySet:
    """Every row of a kind's model, in the bin or not: each declares
    ``objects = LiveManager()``, which is checked here."""
    rows = model._default_manager.all()
    if not isinstance(rows, LiveQuerySet):
        raise TypeError(f"{model.__name__}.objects must be LiveManager().")
    return rows


def register_kind(kind: ItemKind) -> None:
    _KINDS[kind.name] = kind


def item_kind(name: str) -> ItemKind:
    kind = _KINDS.get(name)
    if kind is None:
        raise NotFound(f"There is no kind {name!r}; kinds are {', '.join(sorted(_KINDS))}.")
    return kind


def item_kinds() -> list[ItemKind]:
    return list(_KINDS.values())


def _json(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        # In UTC: the same instant reads the same whether it came from the caller or the database.
        return value.astimezone(dt.UTC).isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    return value


def item_fields(kind: ItemKind, obj: Any) -> dict[str, Any]:
    """The item's content fields as JSON, the form ``before`` and ``after`` keep."""
    return {name: _json(getattr(obj, name)) for name in kind.fields}


def change_record(
    *,
    kind: str,
    obj: Any,
    action: str,
    actor: Actor,
    before: dict[str, Any] | None = None,
    after: dict[str, Any] | None = None,
    detail: dict[str, Any] | None = None,
    pk: int | None = None,
) -> Change | None:
    """Record one change. Call in the transaction that made it. An update that changed no
    content field is not a change and is not recorded. ``pk``: the record's own id, for an
    import, which numbers its records past the ids the file's change log brings."""
    if action == Change.Action.UPDATE and before == after:
        return None
    return Change.objects.create(
        pk=pk,
        kind=kind,
        object_id=obj.pk,
        action=action,
        title=_KINDS[kind].title(obj)[:200] if kind in _KINDS else str(obj)[:200],
        before=before,
        after=after,
        detail=detail or {},
        source=actor.source[:100],
        conversation_id=actor.conversation_id,
        message_id=actor.message_id,
    )


# --- the bin -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class BinItem:
    kind: str
    id: int
    title: str
    deleted_at: dt.datetime
    deleted_by: str


def _latest_delete(kind: str, pk: int) -> Change | None:
    return (
        Change.objects.filter(kind=kind, object_id=pk, action=Change.Action.DELETE)
        .order_by("-id")
        .first()
    )


def bin_list() -> list[BinItem]:
    """Every binned item of every kind, most recently deleted first."""
    items: list[BinItem] = []
    for kind in item_kinds():
        for obj in rows_of(kind.model).filter(deleted_at__isnull=False):
            items.append(
                BinItem(
                    kind=kind.name,
                    id=obj.pk,
                    title=kind.title(obj)[:200],
                    deleted_at=obj.deleted_at,
                    deleted_by="",
                )
            )
    deleters = {
        (row["kind"], row["object_id"]): row["source"]
        for row in Change.objects.filter(
            action=Change.Action.DELETE, object_id__in={item.id for item in items}
        )
        .order_by("id")  # the latest delete of an item wins
        .values("kind", "object_id", "source")
    }
    items = [
        BinItem(
            kind=item.kind,
            id=item.id,
            title=item.title,
            deleted_at=item.deleted_at,
            deleted_by=deleters.get((item.kind, item.id), ""),
        )
        for item in items
    ]
    return sorted(items, key=lambda item: (item.deleted_at, item.kind, item.id), reverse=True)


def bin_move(*, model: type[models.Model], pk: int) -> dt.datetime:
    """Move one live row of ``model`` (a model with ``deleted_at``) to the bin."""
    now = timezone.now()
    if not rows_of(model).live().filter(pk=pk).update(deleted_at=now):
        raise NotFound(f"The {model._meta.verbose_name} is already gone.")
    return now


def bin_restore(*, model: type[models.Model], pk: int) -> None:
    if not rows_of(model).filter(pk=pk, deleted_at__isnull=False).update(deleted_at=None):
        raise NotFound(f"The {model._meta.verbose_name} is no longer in the bin.")


def bin_restore_item(*, kind: str, pk: int, actor: Actor = OWNER) -> None:
    """Bring one binned item back as it was, recording the restore."""
    spec = item_kind(kind)
    with transaction.atomic():
        # Locked: a purge of the same item waits, then finds it no longer in the bin.
        obj = (
            rows_of(spec.model).select_for_update().filter(pk=pk, deleted_at__isnull=False).first()
        )
        if obj is None:
            raise NotFound(f"The {kind} {pk} is no longer in the bin.")
        spec.restore(pk=pk, actor=actor, change=_latest_delete(kind, pk))


def _purge(spec: ItemKind, rows: models.QuerySet) -> int:
    ids = list(rows.values_list("pk", flat=True))
    count, _ = rows_of(spec.model).filter(pk__in=ids).delete()
    # Purged for good: its revisions hold its content, so they go too.
    Change.objects.filter(kind=spec.name, object_id__in=ids).delete()
    return len(ids) if count else 0


def bin_purge_item(*, kind: str, pk: int) -> None:
    """Delete one binned item for good (the owner's session only; see talorys/workspace/api.py)."""
    spec = item_kind(kind)
    with transaction.atomic():
        # Locked and re-checked: a restore that committed first wins, and this finds nothing.
        rows = rows_of(spec.model).select_for_update().filter(pk=pk, deleted_at__isnull=False)
        if not _purge(spec, rows):
            raise NotFound(f"There is no {kind} {pk} in the bin.")


def bin_empty() -> int:
    """Delete everything in the bin for good. Returns how many items."""
    return bin_purge(older_than=dt.timedelta(0))


def bin_purge(*, older_than: dt.timedelta = BIN_RETENTION, kinds: list[str] | None = None) -> int:
    """Delete for good what has been in the bin longer than ``older_than``, of every kind."""
    cutoff = timezone.now() - older_than
    purged = 0
    for spec in item_kinds():
        if kinds is not None and spec.name not in kinds:
            continue
        with transaction.atomic():
            rows = rows_of(spec.model).select_for_update().filter(deleted_at__lte=cutoff)
            purged += _purge(spec, rows)
    return purged


# --- revisions ---------------------------------------------------------------------------------


def revert_refusal(
    *, change: Change, spec: ItemKind, obj: Any, last: Change | None
) -> AppError | None:
    """Why ``change`` cannot be reverted now (an error to raise), or None when it can.

    ``obj`` is the item's row (None once purged), ``last`` the item's latest change. The one
    rule, read by ``change_revert`` under the item's lock and by the pages (through
    ``change_log.change_revert_refusals``), so Revert is offered exactly when it would be tried.
    """
    if obj is None:
        return Conflict(f"The {change.kind} was deleted for good; nothing to revert.")
    binned = obj.deleted_at is not None
    if change.action == Change.Action.DELETE:
        if not binned or last is None or last.pk != change.pk:
            return Conflict(f"The {change.kind} changed since; nothing was reverted.")
        return None
    # On the fields the change kept: one made before a field was tracked still reverts.
    current = item_fields(spec, obj)
    if binned or any(current.get(name) != value for name, value in (change.after or {}).items()):
        return Conflict(f"The {change.kind} changed since this change, so nothing was reverted.")
    if change.action not in (Change.Action.CREATE, Change.Action.RESTORE) and spec.apply is None:
        return ValidationFailed(f"A {change.kind} change cannot be reverted.")
    return None


def change_revert(
    *,
    change_id: int,
    actor: Actor = OWNER,
    of: tuple[str, int] | None = None,
    actions: tuple[str, ...] | None = None,
) -> list[Change]:
    """Undo one change while the item still holds what the change wrote; else Conflict.

    Revert of an update writes ``before`` back; of a create, moves the item to the bin; of a
    delete, restores it; of a restore, bins it again. All under the item's row lock, so an edit
    racing the revert either lands first (and the revert is refused) or after it.

    ``of`` (kind, id): a page about one item reverts only that item's changes, and ``actions``
    only those actions; another change id is NotFound there, and nothing changes.
    """
    with transaction.atomic():
        change = _change_to_revert(change_id=change_id, of=of, actions=actions)
        spec = item_kind(change.kind)
        obj = rows_of(spec.model).select_for_update().filter(pk=change.object_id).first()
        last = (
            Change.objects.filter(kind=change.kind, object_id=change.object_id)
            .order_by("-id")
            .first()
        )
        refusal = revert_refusal(change=change, spec=spec, obj=obj, last=last)
        if refusal is not None:
            raise refusal
        assert obj is not None  # a purged item is refused above
        _revert_apply(change=change, spec=spec, pk=obj.pk, actor=actor)
        made = Change.objects.filter(
            kind=change.kind, object_id=obj.pk, pk__gt=last.pk if last else 0
        )
        made.update(reverts=change)
        return list(made.order_by("id"))


def _change_to_revert(
    *, change_id: int, of: tuple[str, int] | None, actions: tuple[str, ...] | None
) -> Change:
    """The change, locked, if it may be reverted here and was not already: else NotFound or
    Conflict. Called inside the revert's transaction."""
    change = Change.objects.select_for_update().filter(pk=change_id).first()
    if change is None:
        raise NotFound(f"Change {change_id} does not exist.")
    if (of is not None and (change.kind, change.object_id) != of) or (
        actions is not None and change.action not in actions
    ):
        what = f"{of[0]} {of[1]}" if of else "this item"
        raise NotFound(f"Change {change_id} is not a change of {what} that can be reverted here.")
    if change.reverted_by.exists():
        raise Conflict("This change was already reverted.")
    return change


def _revert_apply(*, change: Change, spec: ItemKind, pk: int, actor: Actor) -> None:
    """Undo ``change`` on the locked item ``pk``: restore a delete, bin a create or a restore,
    write ``before`` back over an update."""
    if change.action == Change.Action.DELETE:
        spec.restore(pk=pk, actor=actor, change=change)
    elif change.action in (Change.Action.CREATE, Change.Action.RESTORE):
        spec.bin(pk=pk, actor=actor)
    else:
        assert spec.apply is not None  # checked by revert_refusal
        spec.apply(pk=pk, values=change.before or {}, actor=actor)


class SoftDeleteTool(Tool):
    """A destructive tool that moves one row to the bin (``deleted_at``), undoable for as long
    as the bin keeps it.

    Subclasses name the model, the fields whose change should void an approval, and how to
    describe the target; ``label`` is the item's kind in the bin (talorys/workspace/history.py), whose
    services move it there and back, recording who did. The bin is invisible to lists, search
    and tools (``.live()``).
    """

    permission = Permission.DESTRUCTIVE
    cap = 5
    model: ClassVar[Any]
    id_arg: ClassVar[str]
    label: ClassVar[str]  # "task", "note"...
    snapshot_fields: ClassVar[tuple[str, ...]]

    def describe(self, obj: Any) -> str:
        return str(obj)

    def _live(self, target_id: int, *, lock: bool = False) -> Any:
        rows = self.model.objects.live()
        if lock:
            rows = rows.select_for_update()
        return rows.filter(pk=target_id).first()

    def _hash(self, obj: Any) -> str:
        return snapshot_hash({name: getattr(obj, name) for name in self.snapshot_fields})

    def prepare(self, args: Any, ctx: ToolContext) -> Proposal:
        target_id = getattr(args, self.id_arg)
        obj = self._live(target_id)
        if obj is None:
            raise NotFound(f"There is no {self.label} with id {target_id}.")
        return Proposal(
            target_id=obj.pk,
            snapshot=self._hash(obj),
            summary=f"Delete the {self.label} “{self.describe(obj)}”",
        )

    def snapshot(self, target_id: int) -> str | None:
        # Locked: a direct owner edit cannot slip in between this check and the commit.
        obj = self._live(target_id, lock=True)
        return None if obj is None else self._hash(obj)

    def commit(self, proposal: Proposal, ctx: ToolContext) -> dict[str, Any]:
        item_kind(self.label).bin(pk=proposal.target_id, actor=ctx.actor)
        deleted_at = self.model.objects.get(pk=proposal.target_id).deleted_at
        return {"undoable": True, "deleted_at": deleted_at.isoformat()}

    def undo(self, proposal: Proposal, result: dict[str, Any]) -> dict[str, Any]:
        bin_restore_item(kind=self.label, pk=proposal.target_id)
        return {"restored": True}
