"""Every change to memories. Each change writes a MemoryRevision in the same transaction, so the
history always says what the memory was after each change and who made it.
"""

from __future__ import annotations

import datetime as dt

from django.db import transaction
from django.utils import timezone

from memory.models import Memory, MemoryRevision
from talorys.errors import NotFound, ValidationFailed

# Memories are short facts; a long text belongs in a note.
MAX_MEMORY_TEXT = 2_000


def clean_memory_text(text: str | None) -> str:
    text = (text or "").strip()
    if not text:
        raise ValidationFailed("text must not be empty.")
    if len(text) > MAX_MEMORY_TEXT:
        raise ValidationFailed(
            f"text is longer than {MAX_MEMORY_TEXT} characters; keep a memory to one fact "
            "and put longer text in a note."
        )
    return text


def _check_choice(value: str, *, field: str, choices: list[str]) -> str:
    if value not in choices:
        raise ValidationFailed(f"{field} must be one of {', '.join(choices)}.")
    return str(value)


def _record(memory: Memory, action: str) -> MemoryRevision:
    return MemoryRevision.objects.create(
        memory=memory,
        action=action,
        text=memory.text,
        category=memory.category,
        source=memory.source,
    )


def memory_create(*, text: str, category: str = "fact", source: str = "owner") -> Memory:
    text = clean_memory_text(text)
    category = _check_choice(category, field="category", choices=Memory.Category.values)
    source = _check_choice(source, field="source", choices=Memory.Source.values)
    with transaction.atomic():
        memory = Memory.objects.create(text=text, category=category, source=source)
        _record(memory, MemoryRevision.Action.CREATE)
    return memory


def memory_update(
    *,
    memory_id: int,
    text: str | None = None,
    category: str | None = None,
    source: str = "owner",
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
        memory.text = text if text is not None else memory.text
        memory.category = category if category is not None else memory.category
        memory.source = source
        memory.save()
        _record(memory, MemoryRevision.Action.UPDATE)
    return memory


def memory_delete(*, memory_id: int, source: str = "owner") -> None:
    """The owner's direct delete: the memory and its history are erased, so nothing about it
    stays behind (the model's deletions go through approvals instead).
    """
    _check_choice(source, field="source", choices=Memory.Source.values)
    deleted, _ = Memory.objects.live().filter(pk=memory_id).delete()
    if not deleted:
        raise NotFound(f"Memory {memory_id} does not exist.")


def memory_bin(*, memory_id: int, source: str) -> Memory:
    """An approved deletion: the memory goes to the bin (restorable for 30 days), with a revision."""
    with transaction.atomic():
        memory = Memory.objects.live().select_for_update().filter(pk=memory_id).first()
        if memory is None:
            raise NotFound(f"Memory {memory_id} does not exist.")
        memory.deleted_at = timezone.now()
        memory.source = _check_choice(source, field="source", choices=Memory.Source.values)
        memory.save(update_fields=["deleted_at", "source", "updated_at"])
        _record(memory, MemoryRevision.Action.DELETE)
    return memory


def memory_restore(*, memory_id: int, source: str = "owner") -> Memory:
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
        _record(memory, MemoryRevision.Action.RESTORE)
    return memory


def memory_bin_purge(*, older_than: dt.timedelta) -> int:
    count, _ = Memory.objects.filter(deleted_at__lt=timezone.now() - older_than).delete()
    return count
