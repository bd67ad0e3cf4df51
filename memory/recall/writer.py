"""Keeping the recall index current (memory.services.reindex and reindex_recent are these):
entries from every source, then vectors for them.

- ``reindex()`` compares every recallable item with its entry by content hash, writes what
  changed, leaves a tombstone for what is gone, and embeds every entry whose vector is missing
  or stale (another content or another embedder). ``full=True`` also re-embeds every vector.
  The catch-up task and ``manage.py talorys_reindex`` call it.
- ``reindex_items(kind=, ids=)`` writes the entries of the items named, at once (an import).
- ``reindex_recent(limit=)`` is the lazy pass a turn makes before it recalls: the items changed
  since the last pass (the change log; new messages), and at most ``limit`` vectors.

Entry writes take IndexState's row lock and number the rows (``seq``) inside it, so entries
commit in seq order and each process's copy (memory/recall/index.py) misses none. Embedding is
I/O and never runs inside a transaction: a batch is embedded first, then stored only where the
entry still has the content it was made from.
"""

from __future__ import annotations

import datetime as dt
import logging
import secrets
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.utils import timezone

from memory import embeddings
from memory.embeddings import Embedder
from memory.models import IndexState, RecallEntry
from memory.recall.clock import CLOCK_COLUMNS, READ_CLOCK
from memory.recall.index import INDEX, STATE_COLUMNS
from memory.recall.sources import Doc, RecallSource, source, sources
from memory.recall.text import content_hash
from talorys.history.selectors import changed_since
from talorys.lib.errors import BudgetExhausted
from talorys.providers.base import ProviderError

logger = logging.getLogger(__name__)

WRITE_BATCH = 500
EMBED_BATCH = 64
# The lazy pass looks this far behind its last start: a transaction that began before it and
# committed after it is still seen.
RECENT_LOOKBACK = dt.timedelta(minutes=2)
# How many vectors a turn's lazy pass may make (one embedding request at most).
RECENT_EMBED_LIMIT = 16
# How far the lazy pass's clock may lag before it is moved on.
CLOCK_STEP = dt.timedelta(seconds=30)
_LAZY_EMBEDDING = threading.Lock()
# Tombstones older than this are purged by the catch-up: every live process has long seen them.
TOMBSTONE_AGE = dt.timedelta(days=1)


@dataclass
class ReindexReport:
    written: int = 0  # entries added or changed
    removed: int = 0  # tombstones left for items gone
    embedded: int = 0
    embed_error: str = ""
    kinds: dict[str, int] = field(default_factory=dict)  # live entries per kind
    # The lazy pass: IndexState's clock as it read it, when it wrote nothing (index.sync's).
    state: dict[str, Any] | None = None


def _state_locked() -> IndexState:
    """IndexState's row, locked until the transaction ends; made on first use."""
    state = IndexState.objects.select_for_update().filter(pk=1).first()
    if state is None:
        try:
            with transaction.atomic():
                IndexState.objects.create(pk=1, generation=secrets.token_hex(8))
        except IntegrityError:  # made by a concurrent writer
            pass
        state = IndexState.objects.select_for_update().get(pk=1)
    return state


def _entry_values(doc: Doc) -> dict[str, object]:
    title = doc.title[: RecallEntry.TITLE_MAX]
    text = doc.body[: RecallEntry.TEXT_MAX]
    return {
        "title": title,
        "text": text,
        "parent_id": doc.parent_id,
        "content_hash": content_hash(title, text),
        "stated_at": doc.when,
    }


def _same(row: Mapping[str, Any], values: dict[str, object]) -> bool:
    """The entry already says what ``values`` say: the same content, stated at the same time
    (a new time with the same content is rewritten too: the ranking's recency reads it)."""
    return row["content_hash"] == values["content_hash"] and row["stated_at"] == values["stated_at"]


def _write(kind: str, docs: list[Doc], gone: Iterable[int], report: ReindexReport) -> None:
    """Upsert entries whose hash changed and tombstone ``gone``; one transaction, numbered,
    counted into ``report``."""
    gone = set(gone)
    with transaction.atomic():
        state = _state_locked()
        ids = {doc.object_id for doc in docs} | gone
        existing = {
            row["object_id"]: row
            for row in RecallEntry.objects.filter(kind=kind, object_id__in=ids).values(
                "id", "object_id", "content_hash", "live", "stated_at"
            )
        }
        seq = state.seq
        created: list[RecallEntry] = []
        unchanged: list[int] = []
        written = 0
        for doc in docs:
            values = _entry_values(doc)
            row = existing.get(doc.object_id)
            if row is not None and row["live"] and _same(row, values):
                unchanged.append(row["id"])
                continue
            seq += 1
            written += 1
            if row is None:
                created.append(RecallEntry(kind=kind, object_id=doc.object_id, seq=seq, **values))
            else:
                RecallEntry.objects.filter(pk=row["id"]).update(
                    **values, live=True, seq=seq, updated_at=timezone.now()
                )
        seq, removed = _tombstone(gone, existing, seq)
        RecallEntry.objects.bulk_create(created)
        # Checked and still right: newer than the change that sent the lazy pass here (no seq:
        # the in-memory copies have nothing to learn).
        RecallEntry.objects.filter(pk__in=unchanged).update(updated_at=timezone.now())
        if seq != state.seq:
            IndexState.objects.filter(pk=1).update(seq=seq)
    report.written += written
    report.removed += removed


def _tombstone(
    gone: set[int], existing: Mapping[int, Mapping[str, Any]], seq: int
) -> tuple[int, int]:
    """Empty the live entries of ``gone``, each numbered after ``seq``; the last number and how
    many were emptied."""
    removed = 0
    for object_id in gone:
        row = existing.get(object_id)
        if row is None or not row["live"]:
            continue
        seq += 1
        removed += 1
        RecallEntry.objects.filter(pk=row["id"]).update(
            live=False, text="", title="", vector=None, seq=seq, updated_at=timezone.now()
        )
    return seq, removed


def _stale(kind: str, changed: dict[int, dt.datetime]) -> set[int]:
    """Of the items changed (id -> when), those whose entry is missing or older than the change."""
    entries = dict(
        RecallEntry.objects.filter(kind=kind, object_id__in=changed).values_list(
            "object_id", "updated_at"
        )
    )
    return {pk for pk, when in changed.items() if pk not in entries or entries[pk] < when}


def _sync_kind(src: RecallSource, ids: set[int] | None, report: ReindexReport) -> None:
    """Entries of ``src`` for ``ids`` (None: all) brought in line with the items."""
    if ids is not None and not ids:
        return
    seen: set[int] = set()
    batch: list[Doc] = []
    for doc in src.docs(ids):
        seen.add(doc.object_id)
        batch.append(doc)
        if len(batch) >= WRITE_BATCH:
            _write(src.kind, batch, (), report)
            batch = []
    if ids is None:  # every item: what is indexed and no longer there is gone
        indexed = RecallEntry.objects.filter(kind=src.kind, live=True)
        ids = set(indexed.values_list("object_id", flat=True))
    _write(src.kind, batch, ids - seen, report)


def _embed_pending(
    *,
    limit: int | None,
    report: ReindexReport,
    everything: bool = False,
    lazy: bool = False,
    embedder: Embedder | None | object = embeddings.ACTIVE,
) -> None:
    """Vectors for entries that have none from the active embedder for their content.

    ``lazy`` (the per-recall pass): which ones is asked of this process's in-memory index,
    which knows without reading the table (a scan of every entry at each recall otherwise)."""
    if limit == 0:  # a turn's pass before its first token: words only (no sync to ask either)
        return
    if embedder is embeddings.ACTIVE:
        embedder = embeddings.active_embedder()
    if not isinstance(embedder, embeddings.Embedder):
        return
    # One lazy pass of a process embeds at a time; another one now leaves it the work: they
    # would all pick the same newest items (under load, four turns' passes embedded the same
    # sixteen texts at once, and the chat's throughput fell by a third).
    if lazy and not _LAZY_EMBEDDING.acquire(blocking=False):
        return
    try:
        _embed_pending_now(
            limit=limit, report=report, everything=everything, lazy=lazy, embedder=embedder
        )
    finally:
        if lazy:
            _LAZY_EMBEDDING.release()


def _embed_pending_now(
    *, limit: int | None, report: ReindexReport, everything: bool, lazy: bool, embedder: Embedder
) -> None:
    entries = RecallEntry.objects.filter(live=True)
    if lazy and limit is not None:
        with INDEX.lock:
            # Nothing written by this pass and every item of the copy has a vector: nothing to
            # make (what another process wrote since shows at the next recall's pass).
            if not report.written and INDEX.has_every_vector(embedder.name):
                return
            INDEX.sync(vector_model=embedder.name)
            missing = INDEX.missing_vectors(limit)
        if not missing:
            return
        wanted = Q()
        for kind in {kind for kind, _ in missing}:
            wanted |= Q(kind=kind, object_id__in=[pk for k, pk in missing if k == kind])
        entries = entries.filter(wanted)
    elif not everything:
        entries = entries.filter(
            Q(vector__isnull=True)
            | ~Q(vector_model=embedder.name)
            | ~Q(vector_hash=F("content_hash"))
        )
    pending = entries.order_by("-seq").values_list("id", "title", "text", "content_hash")
    todo: list[tuple[int, str, str, str]] = list(pending[:limit] if limit is not None else pending)
    _embed_batches(todo, embedder, report, lazy=lazy)


def _embed_batches(
    todo: list[tuple[int, str, str, str]], embedder: Embedder, report: ReindexReport, *, lazy: bool
) -> None:
    for start in range(0, len(todo), EMBED_BATCH):
        batch = todo[start : start + EMBED_BATCH]
        try:
            vectors = embeddings.document_vectors(
                embedder, [(t, x) for _, t, x, _ in batch], force=not lazy
            )
        except (ProviderError, BudgetExhausted) as error:
            # Left for the next pass; recall meanwhile ranks these by keyword only.
            logger.warning("Recall: embedding %d entries failed: %s", len(batch), error)
            report.embed_error = str(error)
            return
        report.embedded += _store_vectors(embedder.name, batch, vectors)


def _store_vectors(model: str, batch: list[tuple[int, str, str, str]], vectors: np.ndarray) -> int:
    stored = 0
    with transaction.atomic():
        state = _state_locked()
        seq = state.seq
        for (entry_id, _title, _text, chash), vector in zip(batch, vectors, strict=True):
            seq += 1
            # Only while the entry still holds what was embedded: a newer text waits its turn.
            stored += RecallEntry.objects.filter(pk=entry_id, live=True, content_hash=chash).update(
                vector=np.ascontiguousarray(vector, dtype="<f4").tobytes(),
                vector_model=model,
                vector_dim=int(vector.shape[0]),
                vector_hash=chash,
                seq=seq,
            )
        IndexState.objects.filter(pk=1).update(seq=seq)
    return stored


def reindex(*, full: bool = False, embed_limit: int | None = None) -> ReindexReport:
    """Bring the whole index up to date, synchronously. ``full`` re-embeds every vector too;
    ``embed_limit`` caps how many vectors this call makes (the rest wait for the next)."""
    report = ReindexReport()
    started = timezone.now()
    for src in sources():
        _sync_kind(src, None, report)
    _embed_pending(limit=embed_limit, report=report, everything=full)
    with transaction.atomic():
        state = _state_locked()
        # Tombstones every process has had a day to see; one that saw less reloads in full.
        old = RecallEntry.objects.filter(live=False, updated_at__lt=started - TOMBSTONE_AGE)
        upto = max(old.values_list("seq", flat=True), default=0)
        old.delete()
        state.purged_upto = max(state.purged_upto, upto)
        state.recent_since = started
        state.last_full_at = started
        state.save(update_fields=["purged_upto", "recent_since", "last_full_at"])
    report.kinds = {
        src.kind: RecallEntry.objects.filter(kind=src.kind, live=True).count() for src in sources()
    }
    return report


def reindex_items(*, kind: str, ids: set[int]) -> ReindexReport:
    """Entries for these items of ``kind`` now (an import's batch, imports/services.py): their
    words, so search and recall find them at once; their vectors are the catch-up's, which
    embeds every entry that has none."""
    report = ReindexReport()
    _sync_kind(source(kind), set(ids), report)
    return report


def _sync_changed(*, since: dt.datetime, skip: tuple[str, ...], report: ReindexReport) -> None:
    """Re-index the items of each kind not in ``skip`` changed since ``since`` (the lookback
    window), counting into ``report``."""
    logged = changed_since(
        kinds=[src.kind for src in sources() if src.logged and src.kind not in skip],
        since=since,
    )
    for src in sources():
        if src.kind in skip:
            continue
        changed = (
            logged[src.kind]
            if src.logged
            else (src.changed_since(since) if src.changed_since else {})
        )
        # Re-read only what changed after its entry was written: an entry written before a
        # late-committing change is caught here (the lookback), one written after it by another
        # pass from older content is left to the catch-up.
        _sync_kind(src, _stale(src.kind, changed) if changed else set(), report)


def reindex_recent(
    *,
    embed_limit: int = RECENT_EMBED_LIMIT,
    skip: tuple[str, ...] = (),
    embedder: Embedder | None | object = embeddings.ACTIVE,
    clock: dict[str, Any] | None | object = READ_CLOCK,
) -> ReindexReport:
    """The lazy pass: items changed since the last pass, and a few vectors.

    ``skip``: kinds left for a later pass (a turn skips "message" before its first token: its
    own new message needs no index yet, and indexing it would cost a commit; the pass after the
    reply does them). A pass that skips a kind does not move the clock on. ``embedder``: the
    active one when the caller already looked it up (None: none is on). ``clock``: the index's
    clock as the caller read it a moment ago (memory/recall/clock.py; older is safe: a longer
    lookback, a state the ranking syncs past).

    Cheap when nothing changed (a read of the clock and one or two queries per kind: what
    changed lately, and whether its entry is already newer). Whatever it leaves
    (more vectors than ``embed_limit``, a change it could not see) the catch-up task finishes.
    """
    report = ReindexReport()
    started = timezone.now()
    if clock is READ_CLOCK:
        clock = IndexState.objects.filter(pk=1).values(*CLOCK_COLUMNS).first()
    assert clock is None or isinstance(clock, dict)
    since = clock["recent_since"] if clock else None
    if since is None:
        # Never indexed: the first pass indexes every item's words (once per install); its
        # vectors, as capped as ever, are the catch-up's to finish.
        return reindex(embed_limit=embed_limit)
    _sync_changed(since=since - RECENT_LOOKBACK, skip=skip, report=report)
    _embed_pending(limit=embed_limit, report=report, lazy=True, embedder=embedder)
    # The clock moves on at most every CLOCK_STEP: a write (and a commit) at every recall would
    # cost more than the few more changes each pass looks at (the lookback covers the step).
    if not skip and started - since >= CLOCK_STEP:
        IndexState.objects.filter(pk=1, recent_since__lt=started).update(recent_since=started)
    if not (report.written or report.removed or report.embedded):
        # Unchanged by this pass: the ranking that follows may sync with it, not read it again.
        report.state = {name: clock[name] for name in STATE_COLUMNS} if clock else None
    return report


def reindex_after_reply() -> ReindexReport:
    """``reindex_recent`` after a turn's reply is out, then this process's copy of the index
    brought up to date with what it wrote: the next turn here finds nothing to read for its
    ranking before its first token (the read is made now, when nobody waits for it)."""
    report = reindex_recent()
    with INDEX.lock:
        INDEX.sync(vector_model=None)
    return report
