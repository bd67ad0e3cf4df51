"""The owner settles a contradiction the conflict check marked (``conflicts_with``): keep one
of the two (the other is superseded by it: kept in the history, never recalled, revertable
like any supersede) or keep both (the mark is cleared). Either way a revision says who settled
it and when, like every other change to a memory (``_record`` in memories.py)."""

from __future__ import annotations

from django.db import transaction
from django.db.models import Q

from memory.models import Memory, MemoryRevision
from memory.services.memories import MEMORY, _record, memory_supersede
from talorys.history.kinds import item_fields
from talorys.lib.actors import OWNER, Actor
from talorys.lib.errors import Conflict, NotFound


def _locked_pair(memory_id: int, other_id: int) -> tuple[Memory, Memory]:
    """Both memories, locked (in id order, so two resolutions of one pair queue rather than
    deadlock), if both are current and one is marked as contradicting the other."""
    rows = {
        m.pk: m
        for m in Memory.objects.live()
        .select_for_update()
        .filter(pk__in=[memory_id, other_id], superseded_by__isnull=True)
        .order_by("pk")
    }
    for pk in (memory_id, other_id):
        if pk not in rows:
            raise NotFound(f"Memory {pk} does not exist, or a newer memory superseded it.")
    memory, other = rows[memory_id], rows[other_id]
    if memory_id == other_id or (
        memory.conflicts_with_id != other.pk and other.conflicts_with_id != memory.pk
    ):
        raise Conflict("These memories are not marked as contradicting each other.")
    return memory, other


def _clear_marks(memory: Memory, other: Memory) -> None:
    Memory.objects.filter(
        Q(pk=memory.pk, conflicts_with=other.pk) | Q(pk=other.pk, conflicts_with=memory.pk)
    ).update(conflicts_with=None)


def memory_contradiction_keep(*, keep_id: int, other_id: int, actor: Actor = OWNER) -> Memory:
    """Keep ``keep_id``: ``other_id`` is superseded by it (a revision and a change the owner can
    revert) and the mark between them goes. Returns the memory kept."""
    with transaction.atomic():
        keep, other = _locked_pair(keep_id, other_id)
        memory_supersede(memory_id=other.pk, by_id=keep.pk, source=Memory.Source.OWNER, actor=actor)
        _clear_marks(keep, other)
        keep.refresh_from_db()
    return keep


def memory_contradiction_keep_both(
    *, memory_id: int, other_id: int, actor: Actor = OWNER
) -> Memory:
    """Both hold (the check was wrong, or they are about different times): the mark goes, and the
    memory that carried it gets a revision saying who settled it. Its content is unchanged, so
    the change log records nothing to revert (change_record skips an update that changed no
    content field)."""
    with transaction.atomic():
        memory, other = _locked_pair(memory_id, other_id)
        marked = memory if memory.conflicts_with_id == other.pk else other
        _clear_marks(memory, other)
        marked.refresh_from_db()
        _record(
            marked, MemoryRevision.Action.UPDATE, actor=actor, before=item_fields(MEMORY, marked)
        )
    return memory
