"""Races on PostgreSQL with real threads: index writers against a reader in another "process",
and the same memory told twice at once."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from memory import services as memory_services
from memory.models import Memory, RecallEntry
from memory.recall.index import RecallIndex
from memory.recall.text import terms
from talorys.workspace import services
from tests.automations.conftest import in_threads

pytestmark = pytest.mark.django_db(transaction=True)
WRITERS = 6
EACH = 8


def test_concurrent_index_writers_never_leave_a_reader_behind(needs_postgres):
    """Entries commit in seq order (IndexState's row lock), so a reader that syncs while they
    are written ("seq > last seen") misses none: checked by a second in-memory index."""
    memory_services.reindex()
    reader = RecallIndex()
    done = threading.Event()

    def write(writer: int) -> None:
        for n in range(EACH):
            services.task_create(title=f"Chore zq{writer}x{n}")
            memory_services.reindex_recent()

    def read() -> None:
        try:
            while not done.is_set():
                with reader.lock:
                    reader.sync(vector_model="")
        finally:
            connection.close()

    poller = threading.Thread(target=read)
    poller.start()
    try:
        in_threads(*[lambda w=w: write(w) for w in range(WRITERS)])
    finally:
        done.set()
        poller.join(timeout=30)
    with reader.lock:
        reader.sync(vector_model="")
        missing = [
            (w, n)
            for w in range(WRITERS)
            for n in range(EACH)
            if not reader.keyword(terms(f"zq{w}x{n}"), kinds=["task"], top=1)
        ]
    assert missing == []
    seqs = list(RecallEntry.objects.values_list("seq", flat=True))
    assert len(seqs) == len(set(seqs)) == WRITERS * EACH


def test_one_fact_told_twice_at_once_and_two_moves_at_once_lose_nothing(needs_postgres):
    berlin = memory_services.memory_create_checked(text="Lives in Berlin", category="place").memory

    in_threads(
        lambda: memory_services.memory_create_checked(text="Moved to Lisbon", category="place"),
        lambda: memory_services.memory_create_checked(text="Moved to Porto", category="place"),
        lambda: memory_services.memory_create_checked(text="Plays the oboe"),
        lambda: memory_services.memory_create_checked(text="Plays the oboe"),
    )

    assert not Memory.objects.exclude(deleted_at=None).exists()
    current = set(Memory.objects.filter(superseded_by=None).values_list("text", flat=True))
    assert "Plays the oboe" in current
    # Both moves are kept. When one's check ran after the other had committed, it may have
    # superseded it (a later move updates an earlier one); then by the other move, never lost.
    moves = {m.text: m for m in Memory.objects.filter(text__startswith="Moved to")}
    assert set(moves) == {"Moved to Lisbon", "Moved to Porto"}
    assert moves.keys() & current
    for move in moves.values():
        assert move.superseded_by is None or move.superseded_by.text in moves
    berlin.refresh_from_db()
    assert berlin.superseded_by.text in {"Moved to Lisbon", "Moved to Porto"}
    assert berlin.revisions.filter(action="supersede").count() == 1


def test_words_stemmed_in_many_threads_at_once_stem_as_in_one():
    """A turn reads memories and related items in two threads at once: the stemmer must not be
    shared between them (a shared one corrupts the words, or fails an assertion inside it)."""
    import threading

    from memory.recall import text

    words = [f"y{'y' * (i % 40)}ing{chr(97 + i % 26)}ies" for i in range(4000)]
    expected = [text._stem.__wrapped__(word) for word in words]
    results: list[list[str]] = [[] for _ in range(4)]
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def stem_all(slot: int) -> None:
        try:
            start.wait(timeout=30)
            results[slot] = [text._stem.__wrapped__(word) for word in words]
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=stem_all, args=(slot,)) for slot in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    assert all(result == expected for result in results)
