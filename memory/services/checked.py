"""The writes of memories that run the conflict check (memory/conflict.py) first, named
``*_checked``: the model's and the owner's (page, API, admin). They end in memories.py's
``*_unchecked`` writes, which imports and reverts call directly: those are data, never checked.

The check is I/O (a model request): it runs before the transaction that stores the memory, never
inside one; a caller already inside one (the Django admin) runs ``conflict_check`` first and
passes its ``verdict``. A duplicate stores nothing; an update supersedes the older memory (kept,
never recalled, revertable); a contradiction keeps both and marks the new one.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass

from django.db import transaction

from memory.conflict import Verdict, conflict_check
from memory.models import Memory
from memory.services.checks import check_choice, check_validity, clean_memory_text
from memory.services.memories import (
    _KEEP,
    memory_create_unchecked,
    memory_supersede,
    memory_update_unchecked,
)
from talorys.lib.actors import OWNER, Actor
from talorys.lib.errors import NotFound
from talorys.workspace.services.common import check_version

UNCHANGED = Verdict("unrelated", reason="The text did not change.")


@dataclass(frozen=True)
class Remembered:
    """What became of a fact: the memory that holds it now, the verdict, and the memory the
    verdict concerns (the duplicate, the superseded, the contradicted)."""

    memory: Memory
    verdict: Verdict
    other: Memory | None = None
    stored: bool = True


def memory_create_checked(
    *,
    text: str,
    category: str = Memory.Category.FACT,
    source: str = Memory.Source.CHAT,
    actor: Actor = OWNER,
    valid_from: dt.date | None = None,
    valid_to: dt.date | None = None,
    verdict: Verdict | None = None,
) -> Remembered:
    """A new fact, after the conflict check (run here, outside any transaction, unless the
    caller ran it and passes its ``verdict``). Bad input is refused before the check."""
    text = clean_memory_text(text)
    category = check_choice(category, field="category", choices=Memory.Category.values)
    check_validity(valid_from, valid_to)
    return _act_on(
        verdict or conflict_check(text=text),
        store=lambda contradicted: memory_create_unchecked(
            text=text,
            category=category,
            source=source,
            actor=actor,
            valid_from=valid_from,
            valid_to=valid_to,
            conflicts_with_id=contradicted,
        ),
        source=source,
        actor=actor,
    )


def memory_correct_checked(
    *,
    memory_id: int,
    text: str,
    category: str | None = None,
    source: str = Memory.Source.CHAT,
    actor: Actor = OWNER,
    version: int | None = None,
) -> Remembered:
    """The model's correction, after the conflict check against the other memories. A
    correction that duplicates another memory is not applied (the other already says it).
    ``version``: the one the model read; a memory changed since is refused (Conflict)."""
    if _current(memory_id) is None:
        raise NotFound(f"Memory {memory_id} does not exist, or a newer memory superseded it.")
    return memory_update_checked(
        memory_id=memory_id,
        text=text,
        category=category,
        source=source,
        actor=actor,
        version=version,
    )


def memory_update_checked(
    *,
    memory_id: int,
    text: str | None = None,
    category: str | None = None,
    source: str = Memory.Source.OWNER,
    actor: Actor = OWNER,
    valid_from: dt.date | None = _KEEP,
    valid_to: dt.date | None = _KEEP,
    superseded_by: None = _KEEP,
    version: int | None = None,
    verdict: Verdict | None = None,
) -> Remembered:
    """An edit (memory_update_unchecked's fields), after the conflict check when it gives a current
    memory new text: the owner's edit on the page, the API and the admin."""
    if text is not None:
        text = clean_memory_text(text)
    current = _current(memory_id)
    if current is not None:
        # A duplicate stores nothing, so memory_update_unchecked's check under the lock would not run.
        check_version(current, version, noun="memory")
    if verdict is None:
        verdict = UNCHANGED
        if current is not None and text is not None and text != current.text:
            verdict = conflict_check(text=text, exclude_id=memory_id)

    def store(contradicted: int | None) -> Memory:
        return memory_update_unchecked(
            memory_id=memory_id,
            text=text,
            category=category,
            source=source,
            actor=actor,
            valid_from=valid_from,
            valid_to=valid_to,
            superseded_by=superseded_by,
            version=version,
            conflicts_with_id=_KEEP if contradicted is None else contradicted,
        )

    return _act_on(verdict, store=store, source=source, actor=actor, unchanged=current)


def _act_on(
    verdict: Verdict,
    *,
    store: Callable[[int | None], Memory],
    source: str,
    actor: Actor,
    unchanged: Memory | None = None,
) -> Remembered:
    """Carry out a verdict: a duplicate stores nothing (``unchanged`` stays as it is); else
    ``store(contradicted_id)`` writes the memory, and an update supersedes the older one in the
    same transaction."""
    other = _current(verdict.memory_id)
    if verdict.verdict == "duplicate" and other is not None:
        return Remembered(memory=unchanged or other, verdict=verdict, other=other, stored=False)
    with transaction.atomic():
        memory = store(other.pk if other and verdict.verdict == "contradicts" else None)
        if other is not None and verdict.verdict == "updates":
            other = memory_supersede(
                memory_id=other.pk, by_id=memory.pk, source=source, actor=actor
            )
    return Remembered(memory=memory, verdict=verdict, other=other)


def _current(memory_id: int | None) -> Memory | None:
    if memory_id is None:
        return None
    return Memory.objects.live().filter(pk=memory_id, superseded_by__isnull=True).first()


def remembered_note(result: Remembered, *, plain: str = "Memory saved.") -> str:
    """What the check did, in words for the owner (the page's message, the admin's); ``plain``
    when it found nothing to say."""
    other = f"“{result.other.text[:80]}”" if result.other is not None else ""
    verdict = result.verdict.verdict
    if verdict == "duplicate" and not result.stored:
        return f"Already remembered as {other}: nothing new was stored."
    if verdict == "updates" and result.other is not None:
        return (
            f"Saved. It replaces {other}, which is kept under Superseded facts (its history "
            "can revert this)."
        )
    if verdict == "contradicts" and result.other is not None:
        return f"Saved, but it contradicts {other}: settle it under Contradictions."
    return plain
