"""The owner settles a contradiction the conflict check marked: keep one, or keep both."""

from __future__ import annotations

import pytest

from memory import selectors, services
from memory.models import Memory, MemoryRevision
from talorys.history.changes import change_revert
from talorys.history.models import Change
from talorys.lib.actors import Actor
from talorys.lib.errors import Conflict, NotFound


@pytest.fixture
def pair(db):
    older = services.memory_create_unchecked(text="Works at Acme")
    newer = services.memory_create_unchecked(text="Works at Globex", conflicts_with_id=older.pk)
    return newer, older


def test_keeping_one_supersedes_the_other_and_clears_the_mark(pair):
    newer, older = pair
    kept = services.memory_contradiction_keep(
        keep_id=older.pk, other_id=newer.pk, actor=Actor(source="owner")
    )

    newer.refresh_from_db()
    assert kept.pk == older.pk and kept.conflicts_with_id is None
    assert newer.superseded_by_id == older.pk and newer.conflicts_with_id is None
    assert list(selectors.memory_contradictions()) == []
    assert [m.pk for m in selectors.current_memories()] == [older.pk]
    revision = newer.revisions.order_by("-id").first()
    assert revision.action == MemoryRevision.Action.SUPERSEDE and revision.actor == "owner"


def test_keeping_one_is_revertable_like_any_supersede(pair):
    newer, older = pair
    services.memory_contradiction_keep(keep_id=newer.pk, other_id=older.pk)
    change = Change.objects.filter(kind="memory", object_id=older.pk).order_by("-id").first()

    change_revert(change_id=change.pk)

    older.refresh_from_db()
    assert older.superseded_by_id is None


def test_keeping_both_clears_the_mark_with_a_revision(pair):
    newer, older = pair
    before = newer.revisions.count()

    services.memory_contradiction_keep_both(memory_id=older.pk, other_id=newer.pk)

    newer.refresh_from_db()
    older.refresh_from_db()
    assert newer.conflicts_with_id is None and newer.text == "Works at Globex"
    assert older.superseded_by_id is None and newer.superseded_by_id is None
    assert newer.revisions.count() == before + 1
    assert list(selectors.memory_contradictions()) == []


def test_memories_not_marked_against_each_other_change_nothing(pair):
    newer, older = pair
    third = services.memory_create_unchecked(text="Likes tea")

    with pytest.raises(Conflict):
        services.memory_contradiction_keep(keep_id=third.pk, other_id=older.pk)
    with pytest.raises(Conflict):
        services.memory_contradiction_keep_both(memory_id=older.pk, other_id=older.pk)
    with pytest.raises(NotFound):
        services.memory_contradiction_keep(keep_id=newer.pk, other_id=999_999)

    assert Memory.objects.get(pk=newer.pk).conflicts_with_id == older.pk
    assert Memory.objects.filter(superseded_by__isnull=False).count() == 0


def test_a_superseded_memory_can_no_longer_be_kept_over_the_other(pair):
    newer, older = pair
    services.memory_contradiction_keep(keep_id=newer.pk, other_id=older.pk)

    with pytest.raises(NotFound):
        services.memory_contradiction_keep(keep_id=older.pk, other_id=newer.pk)
    assert Memory.objects.get(pk=older.pk).superseded_by_id == newer.pk
