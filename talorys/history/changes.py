"""The change log: every change to an item the owner keeps, recorded in the transaction that
makes it (``change_record``: who, the turn that made it, the content fields before and after),
and undone by ``change_revert`` while the item still holds what the change wrote.
"""

from __future__ import annotations

from typing import Any

from django.db import models, transaction

from talorys.history.kinds import ItemKind, item_fields, item_kind, kind_registered, rows_of
from talorys.history.models import Change
from talorys.lib.actors import OWNER, Actor
from talorys.lib.errors import AppError, Conflict, NotFound, ValidationFailed
from talorys.lib.validation import one_line
from talorys.web.live import pages_tell

# The sources whose changes /api/changes and /changes/ list: what the model did, in chat or
# scheduled, what an MCP client did with a token (config/mcp/), and what a backup import
# changed in items already here (backup/importer.py).
CHANGE_LOG_SOURCES = (
    models.Q(source="chat")
    | models.Q(source__startswith="automation")
    | models.Q(source__startswith="mcp:")
    | models.Q(source="import")
)


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
        # One line, as every title: a memory's title is the start of its text.
        title=one_line(item_kind(kind).title(obj) if kind_registered(kind) else str(obj))[
            : Change.TITLE_MAX
        ],
        before=before,
        after=after,
        detail=detail or {},
        source=actor.source[:100],
        conversation_id=actor.conversation_id,
        message_id=actor.message_id,
    )


def revert_refusal(
    *, change: Change, spec: ItemKind, obj: Any, last: Change | None
) -> AppError | None:
    """Why ``change`` cannot be reverted now (an error to raise), or None when it can.

    ``obj`` is the item's row (None once purged), ``last`` the item's latest change. The one
    rule, read by ``change_revert`` under the item's lock and by the pages (through
    ``refusals.change_revert_refusals``), so Revert is offered exactly when it would be tried.
    """
    if obj is None:
        return Conflict(
            f"The {change.kind} was deleted for good, so this can no longer be reverted."
        )
    binned = obj.deleted_at is not None
    if change.action == Change.Action.DELETE:
        if not binned or last is None or last.pk != change.pk:
            return Conflict(f"The {change.kind} changed since, so this can no longer be reverted.")
        return None
    # On the fields the change kept: one made before a field was tracked still reverts.
    current = item_fields(spec, obj)
    if binned or any(current.get(name) != value for name, value in (change.after or {}).items()):
        return Conflict(f"The {change.kind} changed since, so this can no longer be reverted.")
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
        # A chat page shows the turn's changes under its reply: it marks this one reverted.
        pages_tell("change", change_id=change.pk, message_id=change.message_id)
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
        spec.delete(pk=pk, actor=actor)
    else:
        assert spec.apply is not None  # checked by revert_refusal
        spec.apply(pk=pk, values=change.before or {}, actor=actor)
