"""Every change to memories. Each change writes a MemoryRevision in the same transaction, so the
history always says what the memory was after each change and who made it; the same call records
the generic revision (talorys.workspace.models.Change) that lists the model's changes under its reply and
reverts them, so one function (``_record``) keeps both.
"""

from __future__ import annotations

import datetime as dt

from django.db import transaction
from django.utils import timezone

from memory.models import Memory, MemoryRevision
from talorys.lib.actors import OWNER, Actor
from talorys.lib.errors import NotFound, ValidationFailed
from talorys.workspace.history import ItemKind, bin_purge, change_record, item_fields, register_kind
from talorys.workspace.models import Change


def clean_memory_text(text: str | None) -> str:
    text = (text or "").strip()
    if not text:
        raise ValidationFailed("text must not be empty.")
    if len(text) > Memory.TEXT_MAX:
        raise ValidationFailed(
            f"text is longer than {Memory.TEXT_MAX} characters; keep a memory to one fact "
            "and put longer text in a note."
        )
    return text


def _check_choice(value: str, *, field: str, choices: list[str]) -> str:
    if value not in choices:
        raise ValidationFailed(f"{field} must be one of {', '.join(choices)}.")
    return str(value)


def _record(
    memory: Memory, action: str, *, actor: Actor, before: dict[str, str] | None = None
) -> MemoryRevision:
    fields = item_fields(MEMORY, memory)
    change_record(
        kind=MEMORY.name,
        obj=memory,
        action=action,
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
    )


def memory_create(
    *,
    text: str,
    category: str = Memory.Category.FACT,
    source: str = Memory.Source.OWNER,
    actor: Actor = OWNER,
) -> Memory:
    text = clean_memory_text(text)
    category = _check_choice(category, field="category", choices=Memory.Category.values)
    source = _check_choice(source, field="source", choices=Memory.Source.values)
    with transaction.atomic():
        memory = Memory.objects.create(text=text, category=category, source=source)
        _record(memory, MemoryRevision.Action.CREATE, actor=actor)
    return memory


def memory_update(
    *,
    memory_id: int,
    text: str | None = None,
    category: str | None = None,
    source: str = Memory.Source.OWNER,
    actor: Actor = OWNER,
) -> Memory:
    """Change text and/or category. A call that changes nothing writes no revision.

    The row is locked so that two concurrent corrections are both recorded, one after the other.
    """
    if text is not None:
        text = clean_memory_text(text)
    if category is not None:
        category = _check_choice(category, field="category", choices=Memory.Category.values)
    source = _check_choice(source, field="source", choices=Memory.Source.values)
    with transaction.atomic():
        memory = Memory.objects.live().select_for_update().filter(pk=memory_id).first()
        if memory is None:
            raise NotFound(f"Memory {memory_id} does not exist.")
        changed = (text is not None and text != memory.text) or (
            category is not None and category != memory.category
        )
        if not changed:
            return memory
        before = item_fields(MEMORY, memory)
        memory.text = text if text is not None else memory.text
        memory.category = category if category is not None else memory.category
        memory.source = source
        memory.save()
        _record(memory, MemoryRevision.Action.UPDATE, actor=actor, before=before)
    return memory


def memory_delete(
    *, memory_id: int, source: str = Memory.Source.OWNER, actor: Actor = OWNER
) -> None:
    """The owner's delete: to the bin like every delete; purging it from the bin (the owner's
    session) erases the memory and its history, so nothing about it stays behind then."""
    memory_bin(memory_id=memory_id, source=source, actor=actor)


def memory_bin(*, memory_id: int, source: str, actor: Actor = OWNER) -> Memory:
    """An approved deletion: the memory goes to the bin (restorable for 30 days), with a revision."""
    with transaction.atomic():
        memory = Memory.objects.live().select_for_update().filter(pk=memory_id).first()
        if memory is None:
            raise NotFound(f"Memory {memory_id} does not exist.")
        memory.deleted_at = timezone.now()
        memory.source = _check_choice(source, field="source", choices=Memory.Source.values)
        memory.save(update_fields=["deleted_at", "source", "updated_at"])
        _record(
            memory, MemoryRevision.Action.DELETE, actor=actor, before=item_fields(MEMORY, memory)
        )
    return memory


def memory_restore(
    *, memory_id: int, source: str = Memory.Source.OWNER, actor: Actor = OWNER
) -> Memory:
    with transaction.atomic():
        memory = (
            Memory.objects.select_for_update()
            .filter(pk=memory_id, deleted_at__isnull=False)
            .first()
        )
        if memory is None:
            raise NotFound(f"Memory {memory_id} is not in the bin.")
        memory.deleted_at = None
        memory.source = _check_choice(source, field="source", choices=Memory.Source.values)
        memory.save(update_fields=["deleted_at", "source", "updated_at"])
        _record(memory, MemoryRevision.Action.RESTORE, actor=actor)
    return memory


def memory_bin_purge(*, older_than: dt.timedelta) -> int:
    return bin_purge(older_than=older_than, kinds=[MEMORY.name])


def _memory_apply(*, pk: int, values: dict[str, str], actor: Actor) -> None:
    memory_update(memory_id=pk, **values, source=_source_of(actor), actor=actor)


def _source_of(actor: Actor) -> str:
    if actor.source == "chat":
        return Memory.Source.CHAT
    if actor.source.startswith("automation"):
        return Memory.Source.AUTOMATION
    return Memory.Source.OWNER


MEMORY = ItemKind(
    name="memory",
    model=Memory,
    fields=("text", "category"),
    title=lambda memory: memory.text[:80],
    restore=lambda *, pk, actor, change: memory_restore(
        memory_id=pk, source=_source_of(actor), actor=actor
    ),
    bin=lambda *, pk, actor: memory_bin(memory_id=pk, source=_source_of(actor), actor=actor),
    apply=_memory_apply,
)
register_kind(MEMORY)
