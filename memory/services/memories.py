"""Every change to memories. Each writes, in one transaction and through ``_record``, a
MemoryRevision (what the memory was after it, who made it, from which turn: provenance) and the
change log's entry (talorys.history.models.Change) that lists and reverts the model's changes.

The writes that run the conflict check first are in checked.py (``*_checked``); these are the
plain ones they end in, named ``*_unchecked`` where a checked one exists.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.db import transaction
from django.utils import timezone

from memory.models import Memory, MemoryRevision
from memory.services.checks import check_choice, check_validity, clean_memory_text
from talorys.history.changes import change_record
from talorys.history.kinds import ItemKind, item_fields, register_kind
from talorys.history.models import Change
from talorys.lib.actors import OWNER, Actor
from talorys.lib.errors import NotFound
from talorys.lib.updates import model_update
from talorys.workspace.services.common import check_version


def _record(
    memory: Memory, action: str, *, actor: Actor, before: dict[str, Any] | None = None
) -> MemoryRevision:
    fields = item_fields(MEMORY, memory)
    # In the change log a supersede is an update of the memory (its superseded_by_id).
    superseding = (MemoryRevision.Action.SUPERSEDE, MemoryRevision.Action.REINSTATE)
    change_action = Change.Action.UPDATE if action in superseding else action
    change_record(
        kind=MEMORY.name,
        obj=memory,
        action=change_action,
        actor=actor,
        before=before,
        after=None if action == Change.Action.DELETE else fields,
    )
    return MemoryRevision.objects.create(
        memory=memory,
        action=action,
        text=memory.text,
        category=memory.category,
        source=memory.source,
        valid_from=memory.valid_from,
        valid_to=memory.valid_to,
        superseded_by=memory.superseded_by_id,
        actor=actor.source[:100],
        conversation_id=actor.conversation_id,
        message_id=actor.message_id,
    )


def memory_create_unchecked(
    *,
    text: str,
    category: str = Memory.Category.FACT,
    source: str = Memory.Source.OWNER,
    actor: Actor = OWNER,
    valid_from: dt.date | None = None,
    valid_to: dt.date | None = None,
    conflicts_with_id: int | None = None,
) -> Memory:
    text = clean_memory_text(text)
    category = check_choice(category, field="category", choices=Memory.Category.values)
    source = check_choice(source, field="source", choices=Memory.Source.values)
    check_validity(valid_from, valid_to)
    with transaction.atomic():
        memory = Memory.objects.create(
            text=text,
            category=category,
            source=source,
            valid_from=valid_from,
            valid_to=valid_to,
            conflicts_with_id=conflicts_with_id,
        )
        _record(memory, MemoryRevision.Action.CREATE, actor=actor)
    return memory


# A field left out of an update keeps its value (None is a value for the dates: "unknown").
_KEEP: Any = object()


def memory_update_unchecked(
    *,
    memory_id: int,
    text: str | None = None,
    category: str | None = None,
    source: str = Memory.Source.OWNER,
    actor: Actor = OWNER,
    valid_from: dt.date | None = _KEEP,
    valid_to: dt.date | None = _KEEP,
    conflicts_with_id: int | None = _KEEP,
    superseded_by: None = _KEEP,
    version: int | None = None,
) -> Memory:
    """Change text, category and/or validity. A call that changes nothing writes no revision.
    ``superseded_by=None`` makes a superseded memory current again (the owner's call).

    The row is locked so that two concurrent corrections are both recorded, one after the other.
    A correction settles a contradiction the memory was marked with. ``version``: the one the
    caller read; a memory changed since is refused (Conflict).
    """
    text, category, source = _memory_clean_input(text=text, category=category, source=source)
    with transaction.atomic():
        memory = Memory.objects.live().select_for_update().filter(pk=memory_id).first()
        if memory is None:
            raise NotFound(f"Memory {memory_id} does not exist.")
        check_version(memory, version, noun="memory")
        if superseded_by is not _KEEP:
            memory = memory_supersede(memory_id=memory_id, by_id=None, source=source, actor=actor)
        new, conflict = _memory_changes(
            memory,
            text=text,
            category=category,
            valid_from=valid_from,
            valid_to=valid_to,
            conflicts_with_id=conflicts_with_id,
        )
        _memory_save_changes(memory, new=new, conflict=conflict, source=source, actor=actor)
    return memory


def _memory_clean_input(
    *, text: str | None, category: str | None, source: str
) -> tuple[str | None, str | None, str]:
    """The update's text, category and source, cleaned and checked; None stays None (kept)."""
    if text is not None:
        text = clean_memory_text(text)
    if category is not None:
        category = check_choice(category, field="category", choices=Memory.Category.values)
    source = check_choice(source, field="source", choices=Memory.Source.values)
    return text, category, source


def _memory_changes(
    memory: Memory,
    *,
    text: str | None,
    category: str | None,
    valid_from: dt.date | None,
    valid_to: dt.date | None,
    conflicts_with_id: int | None,
) -> tuple[dict[str, Any], int | None]:
    """The fields ``memory`` would have after the update, and the contradiction it keeps: one
    given explicitly, none once the text changes (a correction settles it), else the old one."""
    starts = memory.valid_from if valid_from is _KEEP else valid_from
    ends = memory.valid_to if valid_to is _KEEP else valid_to
    check_validity(starts, ends)
    new: dict[str, Any] = {
        "text": memory.text if text is None else text,
        "category": memory.category if category is None else category,
        "valid_from": starts,
        "valid_to": ends,
    }
    conflict = memory.conflicts_with_id
    if conflicts_with_id is not _KEEP:
        conflict = conflicts_with_id
    elif new["text"] != memory.text:
        conflict = None
    return new, conflict


# The columns memory_update_unchecked writes.
_MEMORY_COLUMNS = (
    "text",
    "category",
    "valid_from",
    "valid_to",
    "conflicts_with_id",
    "source",
    "version",
)


def _memory_save_changes(
    memory: Memory, *, new: dict[str, Any], conflict: int | None, source: str, actor: Actor
) -> None:
    """Save the locked ``memory`` with ``new`` fields. Only a changed contradiction mark is saved
    without a revision or a new version; any other change is versioned and recorded."""
    if all(getattr(memory, name) == value for name, value in new.items()):
        if conflict != memory.conflicts_with_id:
            memory.conflicts_with_id = conflict
            memory.save(update_fields=["conflicts_with"])
        return
    before = item_fields(MEMORY, memory)
    data = new | {"conflicts_with_id": conflict, "source": source, "version": memory.version + 1}
    model_update(instance=memory, fields=_MEMORY_COLUMNS, data=data)
    _record(memory, MemoryRevision.Action.UPDATE, actor=actor, before=before)


def memory_supersede(
    *, memory_id: int, by_id: int | None, source: str, actor: Actor = OWNER
) -> Memory:
    """Mark ``memory_id`` superseded by ``by_id`` (or, with None, current again), recorded as a
    revision the owner can revert. Its validity ends when the newer one's begins (or today)."""
    with transaction.atomic():
        memory = Memory.objects.live().select_for_update().filter(pk=memory_id).first()
        if memory is None:
            raise NotFound(f"Memory {memory_id} does not exist.")
        # Re-checked under the lock: a fact another newer one already superseded keeps that
        # link (two concurrent updates both stay current; the older fact points at one).
        if memory.superseded_by_id == by_id or (by_id and memory.superseded_by_id):
            return memory
        before = item_fields(MEMORY, memory)
        memory.version += 1
        memory.superseded_by_id = by_id
        memory.superseded_at = timezone.now() if by_id else None
        memory.source = check_choice(source, field="source", choices=Memory.Source.values)
        if by_id is not None:
            newer = Memory.objects.filter(pk=by_id).values_list("valid_from", flat=True).first()
            if memory.valid_to is None:
                memory.valid_to = newer or timezone.localdate()
                if memory.valid_from and memory.valid_to < memory.valid_from:
                    memory.valid_to = memory.valid_from
        memory.save()
        action = MemoryRevision.Action.SUPERSEDE if by_id else MemoryRevision.Action.REINSTATE
        _record(memory, action, actor=actor, before=before)
    return memory


def memory_delete(
    *, memory_id: int, source: str = Memory.Source.OWNER, actor: Actor = OWNER
) -> Memory:
    """To the bin like every delete (restorable for BIN_RETENTION), with a revision; purging it
    from the bin (the owner's session) erases the memory and its history, so nothing about it
    stays behind then."""
    return _memory_bin(memory_id=memory_id, binned=True, source=source, actor=actor)


def memory_restore(
    *, memory_id: int, source: str = Memory.Source.OWNER, actor: Actor = OWNER
) -> Memory:
    return _memory_bin(memory_id=memory_id, binned=False, source=source, actor=actor)


def _memory_bin(*, memory_id: int, binned: bool, source: str, actor: Actor) -> Memory:
    """Move a live memory into the bin (``binned``) or a binned one out, with a revision."""
    with transaction.atomic():
        memory = (
            Memory.objects.select_for_update()
            .filter(pk=memory_id, deleted_at__isnull=binned)
            .first()
        )
        if memory is None:
            where = "does not exist" if binned else "is not in the bin"
            raise NotFound(f"Memory {memory_id} {where}.")
        memory.deleted_at = timezone.now() if binned else None
        memory.source = check_choice(source, field="source", choices=Memory.Source.values)
        memory.save(update_fields=["deleted_at", "source", "updated_at"])
        action = MemoryRevision.Action.DELETE if binned else MemoryRevision.Action.RESTORE
        _record(memory, action, actor=actor, before=item_fields(MEMORY, memory) if binned else None)
    return memory


def _memory_apply(*, pk: int, values: dict[str, Any], actor: Actor) -> None:
    """A revert: old content, old validity, and superseded or not, as the change kept them."""
    values = dict(values)
    source = _source_of(actor)
    with transaction.atomic():
        if "superseded_by_id" in values:
            memory_supersede(
                memory_id=pk, by_id=values.pop("superseded_by_id"), source=source, actor=actor
            )
        for name in ("valid_from", "valid_to"):
            if name in values and values[name] is not None:
                values[name] = dt.date.fromisoformat(values[name])
        memory_update_unchecked(memory_id=pk, **values, source=source, actor=actor)


def _source_of(actor: Actor) -> str:
    if actor.source == "chat":
        return Memory.Source.CHAT
    if actor.source.startswith("automation"):
        return Memory.Source.AUTOMATION
    return Memory.Source.OWNER


MEMORY = ItemKind(
    name="memory",
    model=Memory,
    fields=("text", "category", "valid_from", "valid_to", "superseded_by_id"),
    title=lambda memory: memory.text[:80],
    restore=lambda *, pk, actor, change: memory_restore(
        memory_id=pk, source=_source_of(actor), actor=actor
    ),
    delete=lambda *, pk, actor: memory_delete(memory_id=pk, source=_source_of(actor), actor=actor),
    apply=_memory_apply,
)
register_kind(MEMORY)
