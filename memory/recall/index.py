"""Each process's in-memory recall index: BM25 postings and the vectors of every live entry.

The ``RecallEntry`` table is the truth; this is a copy kept in step by ``seq``. Every recall
first reads the index's clock (IndexState: one query) and applies the entries written since the
last seq it saw, so a write in any process (web, worker, the command) is seen by the next
recall in every process. Writes commit in seq order (memory.services assigns seq under
IndexState's row lock), so "seq > last seen" misses nothing. A new generation (a fresh
database, or one whose IndexState row was rolled back or removed) or purged tombstones past
what it saw reload it, and so does another embedder or too many dead slots.

Why in memory and not the database's full-text engine: one ranking on SQLite and PostgreSQL
alike, and real BM25 (PostgreSQL's ts_rank has no inverse document frequency, which is what
finds a rare name), at a single owner's scale: 100k entries take ~2 s to load and ~60 MB of
postings (plus 1.5 KB per 384-dimension vector). Arrays are ``array.array`` (appends are cheap)
read through zero-copy numpy views under the lock.
"""

from __future__ import annotations

import datetime as dt
import math
import threading
from array import array
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.db.models import QuerySet

from memory.models import IndexState, RecallEntry
from memory.recall import priors
from memory.recall.text import term_counts
from memory.recall.threads import Threads

# BM25's usual constants (Robertson & Zaragoza); titles count twice (a BM25F field weight).
K1 = 1.2
B = 0.75
TITLE_WEIGHT = 2.0
# Rebuild from the table when dead slots (replaced or deleted entries) pass this share.
MAX_DEAD_SHARE = 0.5
LOAD_CHUNK = 2000

# IndexState's clock, as sync reads it.
STATE_COLUMNS = ("generation", "seq", "purged_upto")
_ENTRY_COLUMNS = (
    "kind",
    "object_id",
    "parent_id",
    "title",
    "text",
    "content_hash",
    "live",
    "seq",
    "vector",
    "vector_model",
    "vector_dim",
    "vector_hash",
    "stated_at",
)


@dataclass(frozen=True)
class Ranked:
    kind: str
    object_id: int
    parent_id: int | None
    score: float


class _Postings:
    __slots__ = ("slots", "tfs")

    def __init__(self) -> None:
        self.slots = array("i")
        self.tfs = array("f")


class RecallIndex:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self._reset(generation="", vector_model="")

    def _reset(self, *, generation: str, vector_model: str) -> None:
        self.generation = generation
        self.seq = 0
        self.vector_model = vector_model
        self.kinds: list[str] = []
        self.slot_of: dict[tuple[str, int], int] = {}
        self.hash_of: list[str] = []
        self.kind_code = array("b")
        self.object_ids = array("q")
        self.parent_ids = array("q")  # -1: none
        self.times = array("d")  # when each item was stated, POSIX seconds; NaN: not known
        self.newest = math.nan  # the latest of them (the recency prior's "now")
        self._recency: np.ndarray | None = None
        self._recency_key: tuple[Any, ...] = ()
        self.threads = Threads()
        self.alive = bytearray()
        self.doc_len = array("f")
        self.postings: dict[str, _Postings] = {}
        self.live_count = 0
        self.total_len = 0.0
        self.dead = 0
        # Vectors: rows of float32, each for one slot; a replaced or dead slot's row is dead.
        self.dim = 0
        self.vectors = bytearray()
        self.vector_slots = array("i")
        self.vector_alive = bytearray()
        self.vector_row_of: dict[int, int] = {}

    # --- keeping in step with the table ----------------------------------------------------

    def sync(self, *, vector_model: str | None, state: dict[str, Any] | None = None) -> None:
        """Apply what the table has that this copy has not. Call with ``lock`` held.

        ``vector_model``: the embedder whose vectors to hold (another one reloads); None keeps
        the current one (a keyword-only ranking has no say in it). ``state``: IndexState's
        clock (STATE_COLUMNS) as the caller just read it, when it has written nothing since."""
        if vector_model is None:
            vector_model = self.vector_model
        if state is None:
            state = IndexState.objects.filter(pk=1).values(*STATE_COLUMNS).first()
        if state is None:
            if self.generation or self.slot_of:
                self._reset(generation="", vector_model=vector_model)
            return
        if (
            state["generation"] != self.generation
            or state["purged_upto"] > self.seq
            or vector_model != self.vector_model
            or self.dead > max(1000, MAX_DEAD_SHARE * len(self.alive))
        ):
            self._reload(generation=state["generation"], vector_model=vector_model)
        if state["seq"] > self.seq:
            self._apply(RecallEntry.objects.filter(seq__gt=self.seq))

    def _reload(self, *, generation: str, vector_model: str) -> None:
        self._reset(generation=generation, vector_model=vector_model)
        # Only live entries: a tombstone matters to a copy that already has its item.
        self._apply(RecallEntry.objects.filter(live=True))

    def _apply(self, entries: QuerySet[RecallEntry]) -> None:
        rows = entries.order_by("seq").values_list(*_ENTRY_COLUMNS).iterator(chunk_size=LOAD_CHUNK)
        for (
            kind,
            object_id,
            parent_id,
            title,
            text,
            chash,
            live,
            seq,
            vec,
            vmodel,
            vdim,
            vhash,
            stated_at,
        ) in rows:
            self.seq = max(self.seq, seq)
            key = (kind, object_id)
            slot = self.slot_of.get(key)
            if slot is not None and (not live or self.hash_of[slot] != chash):
                self._kill(slot)
                slot = None
            if not live:
                continue
            if slot is None:
                slot = self._add(key, parent_id, title, text, chash)
            self._set_time(slot, stated_at)
            if vec is not None and vmodel == self.vector_model and vhash == chash:
                self._set_vector(slot, bytes(vec), vdim)

    def _add(
        self, key: tuple[str, int], parent_id: int | None, title: str, text: str, chash: str
    ) -> int:
        kind, object_id = key
        if kind not in self.kinds:
            self.kinds.append(kind)
        slot = len(self.alive)
        self.slot_of[key] = slot
        self.hash_of.append(chash)
        self.kind_code.append(self.kinds.index(kind))
        self.object_ids.append(object_id)
        self.parent_ids.append(-1 if parent_id is None else parent_id)
        self.times.append(math.nan)
        self.threads.add(slot, parent_id=parent_id, object_id=object_id)
        self.alive.append(1)
        counts = {term: float(n) for term, n in term_counts(text).items()}
        for term, n in term_counts(title).items():
            counts[term] = counts.get(term, 0.0) + TITLE_WEIGHT * n
        length = sum(counts.values())
        self.doc_len.append(length)
        self.live_count += 1
        self.total_len += length
        for term, tf in counts.items():
            postings = self.postings.get(term)
            if postings is None:
                postings = self.postings[term] = _Postings()
            postings.slots.append(slot)
            postings.tfs.append(tf)
        return slot

    def _kill(self, slot: int) -> None:
        if not self.alive[slot]:
            return
        self.alive[slot] = 0
        del self.slot_of[(self.kinds[self.kind_code[slot]], self.object_ids[slot])]
        parent = self.parent_ids[slot]
        self.threads.remove(
            slot, parent_id=None if parent < 0 else parent, object_id=self.object_ids[slot]
        )
        self.live_count -= 1
        self.total_len -= self.doc_len[slot]
        self.dead += 1
        row = self.vector_row_of.pop(slot, None)
        if row is not None:
            self.vector_alive[row] = 0

    def _set_time(self, slot: int, stated_at: dt.datetime | None) -> None:
        when = math.nan if stated_at is None else stated_at.timestamp()
        self.times[slot] = when
        if not math.isnan(when) and not when <= self.newest:  # newest NaN: the first one
            self.newest = when

    def _set_vector(self, slot: int, vector: bytes, dim: int) -> None:
        if dim <= 0 or len(vector) != 4 * dim or (self.dim and dim != self.dim):
            return  # not this embedder's shape: left to the reindex, which re-embeds it
        self.dim = dim
        old = self.vector_row_of.get(slot)
        if old is not None:
            self.vector_alive[old] = 0
        self.vector_row_of[slot] = len(self.vector_slots)
        self.vectors.extend(vector)
        self.vector_slots.append(slot)
        self.vector_alive.append(1)

    # --- ranking (call with ``lock`` held) ---------------------------------------------------

    def _kind_mask(self, kinds: list[str] | None) -> np.ndarray:
        alive = np.frombuffer(self.alive, dtype=np.uint8).astype(bool)
        if kinds is None:
            return alive
        codes = [self.kinds.index(kind) for kind in kinds if kind in self.kinds]
        return alive & np.isin(np.frombuffer(self.kind_code, dtype=np.int8), codes)

    def keyword_scores(self, query_terms: list[str], *, kinds: list[str] | None) -> np.ndarray:
        """BM25 over titles (weighted) and bodies, one score per slot, divided by the query's
        total inverse document frequency: about 1 for an item with every query term once at an
        average length, 0 for one with none (so the fusion can weigh it against a cosine)."""
        scores = np.zeros(len(self.alive), dtype=np.float32)
        if not self.live_count or not query_terms:
            return scores
        alive = np.frombuffer(self.alive, dtype=np.uint8)
        lengths = np.frombuffer(self.doc_len, dtype=np.float32)
        average = max(self.total_len / self.live_count, 1e-6)
        total_idf = 0.0
        for term in dict.fromkeys(query_terms):
            postings = self.postings.get(term)
            slots = np.frombuffer(postings.slots, dtype=np.int32) if postings else None
            df = 0
            if slots is not None:
                tfs = np.frombuffer(postings.tfs, dtype=np.float32)  # type: ignore[union-attr]
                keep = alive[slots].astype(bool)
                slots, tfs = slots[keep], tfs[keep]
                df = len(slots)
            # A term no live item has still counts: the query asked for it.
            idf = math.log(1.0 + (self.live_count - df + 0.5) / (df + 0.5))
            total_idf += idf
            if not df or slots is None:
                continue
            norm = K1 * (1.0 - B + B * lengths[slots] / average)
            # A term's slots are distinct, so fancy-index addition adds each once.
            scores[slots] += idf * tfs * (K1 + 1.0) / (tfs + norm)
        scores[~self._kind_mask(kinds)] = 0.0
        return scores / max(total_idf, 1e-6)

    def vector_scores(self, query: np.ndarray, *, kinds: list[str] | None) -> np.ndarray:
        """Cosine similarity per slot (rows and query are unit length): a brute-force matrix
        product. NaN where a slot has no vector from this embedder."""
        scores = np.full(len(self.alive), np.nan, dtype=np.float32)
        rows = len(self.vector_slots)
        if not rows or query.shape != (self.dim,):
            return scores
        matrix = np.frombuffer(self.vectors, dtype=np.float32).reshape(rows, self.dim)
        slots = np.frombuffer(self.vector_slots, dtype=np.int32)
        valid = np.frombuffer(self.vector_alive, dtype=np.uint8).astype(bool)
        # Every row, dead ones too, then only the live ones kept: selecting rows first would
        # copy the whole matrix (150 MB at 100k) on every query.
        query = query.astype(np.float32)
        # One product over every row: numpy's BLAS spreads it over the cores itself (at 100k rows
        # 4.8 ms, as fast as two halves on two threads, which this once did by hand).
        sims = matrix @ query
        scores[slots[valid]] = sims[valid]
        scores[~self._kind_mask(kinds)] = np.nan
        return scores

    def recency_factor(self) -> np.ndarray | None:
        """priors.recency_factor over every slot, made again only after the index changed (an
        exponential over 100k slots took 2 ms a query). Call with ``lock`` held."""
        key = (self.generation, self.seq, len(self.times), self.newest)
        if self._recency_key != key:
            times = np.frombuffer(self.times, dtype=np.float64)
            self._recency = priors.recency_factor(times, self.newest)
            self._recency_key = key
        return self._recency

    def has_every_vector(self, vector_model: str) -> bool:
        """True when this copy holds ``vector_model``'s vectors and no live item lacks one (as of
        its last sync)."""
        return (
            bool(self.generation)
            and self.vector_model == vector_model
            and len(self.vector_row_of) >= self.live_count
        )

    def missing_vectors(self, limit: int) -> list[tuple[str, int]]:
        """Up to ``limit`` live items, newest first, without a vector from ``vector_model``
        (call after ``sync`` with that model): what the lazy pass embeds next, found without
        reading the table."""
        if len(self.vector_row_of) >= self.live_count or limit <= 0:
            return []
        missing = np.frombuffer(self.alive, dtype=np.uint8).astype(bool)
        missing[list(self.vector_row_of)] = False
        slots = np.flatnonzero(missing)[::-1][:limit]
        return [(self.kinds[self.kind_code[slot]], self.object_ids[slot]) for slot in slots]

    def keyword(self, query_terms: list[str], *, kinds: list[str] | None, top: int) -> list[Ranked]:
        return self.best(self.keyword_scores(query_terms, kinds=kinds), top)

    def best(self, scores: np.ndarray, top: int, *, floor: float = 0.0) -> list[Ranked]:
        """The ``top`` slots scoring above ``floor``, best first."""
        if top <= 0:
            return []
        candidates = np.flatnonzero(scores > floor)
        if len(candidates) > top:
            part = np.argpartition(-scores[candidates], top - 1)[:top]
            candidates = candidates[part]
        # Best first; among equals the newer entry (higher slot) first.
        order = np.lexsort((-candidates, -scores[candidates]))
        return [self._ranked(int(slot), float(scores[slot])) for slot in candidates[order]]

    def _ranked(self, slot: int, score: float) -> Ranked:
        parent = self.parent_ids[slot]
        return Ranked(
            kind=self.kinds[self.kind_code[slot]],
            object_id=self.object_ids[slot],
            parent_id=None if parent < 0 else parent,
            score=score,
        )

    def vector_count(self) -> int:
        return len(self.vector_row_of)


# One per process: the web server's threads, a worker, the command share it under its lock.
INDEX = RecallIndex()
