"""Ranking: keyword (BM25), vector (cosine) and hybrid, then hits.

Hybrid is a convex combination of two scores on one scale: BM25 divided by the query's total
inverse document frequency (about 1 when an item has every query term, near 0 when it only
shares a common one), and the cosine *standardised against the query's cosines with the whole
collection*: how many standard deviations above the mean this item is, over ``Z_SPAN`` (so the
few items 4 deviations above the rest count about as much as an item with every query term).
``HYBRID_WEIGHT`` of the vector, the rest keyword.

Why standardised, not the raw cosine: a small sentence model's cosines mean different things
for different questions. On long chat histories (LoCoMo, benchmarks/recall_longchat.py) a
question naming a person has cosines around 0.35 with everything that person said, another
question around 0.15 with everything; the raw cosine at 0.7 of the weight buried the keyword
match and hybrid lost to keyword only (R@10 0.662 vs 0.680). Measured on that set with the
sentence vectors and the priors below (``benchmarks/recall_longchat.py --fusion``, R@10): raw
cosine 0.730, min-max over the collection 0.745, reciprocal rank fusion 0.697 (it throws the
scores away: an item sharing one common word ranks with the best semantic match), keyword first
with its top 50 re-ranked 0.670, standardised 0.754. A grid over the same score arrays (weights
0.3 to 0.5, spans 3 to 6) stayed within 0.012 R@10; 0.5 keeps the recall set's paraphrases (0.4
gave it R@10 0.941). With few vectors the mean and deviation are shrunk toward the embedder's
unrelated level (``PRIOR_ITEMS`` pseudo-items at its floor, with ``PRIOR_SPREAD``), so a
collection of three notes still finds a paraphrase. A cosine at or below the embedder's floor
counts as nothing, so a query that matches nothing finds nothing.
With no embedder, or when it fails, the keyword ranking is the answer.

Then, in every mode, what an item's own text cannot say (``with_priors``; the constants and
their reasons are in priors.py): a message's score rises halfway toward its previous turn's in
the same conversation when that turn matches better (a short reply is found by the question it
answers), and every score is weighed by a bounded recency prior (at most a fifth more for the
newest item, half of that for one a quarter of a year older), so of two statements that match
alike the later one ("moved to Lisbon" after "I live in Berlin") comes first, and an item
stated within a period the query names ("in May 2023", "last month": periods.py) counts more.
Superseded memories are never ranked at all; the prior orders the rest, messages above all.

Each recall first catches the index up with what changed since the last pass (writer.py's
lazy pass: cheap when nothing did). Every hit is checked against its source before it is
returned (``live_pks``, in the statement that reads the hits' text): an item binned or
superseded a moment ago, whose entry the index has not caught up with, is never recalled.
"""

from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from django.db.models import Q
from django.utils import timezone

from memory import embeddings
from memory.embeddings import Embedder
from memory.models import RecallEntry
from memory.recall import priors
from memory.recall.index import INDEX, Ranked
from memory.recall.periods import Period, periods
from memory.recall.sources import check_kinds, source
from memory.recall.text import fold, terms
from memory.recall.writer import reindex_recent
from talorys.lib.errors import BudgetExhausted
from talorys.lib.search import window
from talorys.providers.base import ProviderError

logger = logging.getLogger(__name__)

Mode = Literal["keyword", "vector", "hybrid"]
HYBRID_WEIGHT = 0.5
Z_SPAN = 4.0
PRIOR_ITEMS = 20
PRIOR_SPREAD = 0.12  # a sentence model's spread of cosines over a collection (LoCoMo: 0.11-0.18)
_TOKEN = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class Hit:
    kind: str
    id: int
    title: str
    snippet: str
    score: float
    conversation_id: int | None = None
    details: dict[str, Any] | None = None  # the source's ``details`` (a passage's file)


@dataclass(frozen=True)
class Recall:
    hits: list[Hit]
    mode: Mode  # what ranked them: "keyword" when no embedder is on or it failed
    error: str = ""  # why vectors were not used, when an embedder is on


def rank(
    query: str,
    *,
    kinds: list[str] | None,
    top: int,
    mode: Mode | None = None,
    embedder: Embedder | None | object = embeddings.ACTIVE,
    state: dict[str, Any] | None = None,
    unrelated: bool = False,
) -> tuple[list[Ranked], Mode, str]:
    """The ranking of ``query`` over the index, best first, at most ``top``.

    ``mode`` None: hybrid when an embedder is on, else keyword. Raises nothing for an embedder's
    failure: the keyword ranking stands, and the error is returned for the caller to show.
    ``unrelated``: keep the cosines below the embedder's floor too (the conflict check wants its
    nearest memories however far, for the model to judge).
    """
    if mode == "keyword":
        embedder = None
    elif embedder is embeddings.ACTIVE:
        embedder = embeddings.active_embedder()
    assert embedder is None or isinstance(embedder, Embedder)
    # Keyword only: keep whichever vectors the copy holds (switching would reload it).
    vector_model = embedder.name if embedder is not None else (None if mode == "keyword" else "")
    query_vector: np.ndarray | None = None
    error = ""
    floor = embedder.floor if embedder is not None and not unrelated else 0.0
    if embedder is not None:
        # Outside the index's lock: it is a request to a server (or a model's forward pass).
        try:
            query_vector = embeddings.embed_query(embedder, query)
        except (ProviderError, BudgetExhausted) as exc:
            logger.warning("Recall: the query's embedding failed, keyword only: %s", exc)
            error = str(exc)
    query_terms = terms(query)
    named = periods(query, now=timezone.now())
    with INDEX.lock:
        INDEX.sync(vector_model=vector_model, state=state)
        lexical = INDEX.keyword_scores(query_terms, kinds=kinds)
        if query_vector is None or mode == "keyword":
            return INDEX.best(with_priors(lexical, named), top), "keyword", error
        semantic = INDEX.vector_scores(query_vector, kinds=kinds)
        if mode == "vector":
            scores = with_priors(np.nan_to_num(semantic, nan=0.0), named)
            scores[np.isnan(semantic)] = -np.inf  # no vector from this embedder: no rank
            return INDEX.best(scores, top, floor=-np.inf), "vector", error
        scores = hybrid_scores(lexical, semantic, floor=floor)
        return INDEX.best(with_priors(scores, named), top), "hybrid", error


def with_priors(scores: np.ndarray, named: list[Period]) -> np.ndarray:
    """``scores`` with each message's conversation, each item's time and the periods the query
    names (``named``) taken into account (priors.py). Call with INDEX.lock held."""
    scores = priors.in_conversation(scores, INDEX.threads.previous())
    scores = priors.recency(scores, INDEX.recency_factor())
    return priors.in_period(scores, np.frombuffer(INDEX.times, dtype=np.float64), named)


def hybrid_scores(lexical: np.ndarray, semantic: np.ndarray, *, floor: float = 0.0) -> np.ndarray:
    """The convex combination of the keyword score and the standardised cosine (the module's
    docstring says why). A cosine at or below the embedder's ``floor`` (its unrelated texts'
    level) counts as 0. An item without a vector yet (written since the last pass embedded) is
    ranked by its keyword score alone, which stands in for the cosine it does not have."""
    missing = np.isnan(semantic)
    known = semantic[~missing]
    count = known.size + PRIOR_ITEMS
    center = (float(known.sum(dtype=np.float64)) + PRIOR_ITEMS * floor) / count
    deviation = known - np.float32(center)
    spread = math.sqrt((float(deviation @ deviation) + PRIOR_ITEMS * PRIOR_SPREAD**2) / count)
    # In place, one array: at 100k items every extra pass is a tenth of a millisecond.
    scores = semantic - np.float32(center)
    scores *= np.float32(HYBRID_WEIGHT / (Z_SPAN * spread))
    np.fmax(scores, 0.0, out=scores)  # and no vector (NaN): 0
    scores *= semantic > floor  # at or below the floor: 0
    lexical = np.minimum(lexical, 1.0)
    np.copyto(scores, HYBRID_WEIGHT * lexical, where=missing)
    scores += np.float32(1.0 - HYBRID_WEIGHT) * lexical
    return scores


def recall(
    *,
    query: str,
    kinds: list[str] | None = None,
    limit: int = 10,
    mode: Mode | None = None,
    catch_up: bool = True,
    embedder: Embedder | None | object = embeddings.ACTIVE,
    state: dict[str, Any] | None = None,
    unrelated: bool = False,
) -> Recall:
    """``catch_up``: first index what changed since the last pass (reindex_recent), so an item
    made a moment ago is found; a caller that just did it passes False (with the ``embedder``
    it looked up and the clock ``state`` the pass returned, to spare the queries).
    ``unrelated``: see ``rank``."""
    kinds = check_kinds(kinds)
    query = query.strip()
    if not query or limit <= 0:
        return Recall(hits=[], mode="keyword")
    # Looked up once for both: the owner's settings are a query.
    if embedder is embeddings.ACTIVE:
        embedder = embeddings.active_embedder()
    if catch_up:
        state = reindex_recent(embedder=embedder).state
    ranked, used, error = rank(
        query,
        kinds=kinds,
        top=2 * limit + 5,
        mode=mode,
        embedder=embedder,
        state=state,
        unrelated=unrelated,
    )
    return Recall(hits=_hits(ranked, query=query, limit=limit), mode=used, error=error)


def _hits(ranked: list[Ranked], *, query: str, limit: int) -> list[Hit]:
    """The best ``limit`` of ``ranked`` whose item is recallable now, with their text: one
    statement reads the entries of the live ones (each source's ``live_pks``)."""
    by_kind: dict[str, set[int]] = {}
    for item in ranked:
        by_kind.setdefault(item.kind, set()).add(item.object_id)
    if not by_kind:
        return []
    live = Q()
    for kind, ids in by_kind.items():
        live |= Q(kind=kind, object_id__in=source(kind).live_pks(ids))
    entries = {
        (kind, object_id): (title, text)
        for kind, object_id, title, text in RecallEntry.objects.filter(live).values_list(
            "kind", "object_id", "title", "text"
        )
    }
    chosen = [item for item in ranked if (item.kind, item.object_id) in entries][:limit]
    details = _details(chosen)
    query_terms = set(terms(query))
    hits = []
    for item in chosen:
        title, text = entries[item.kind, item.object_id]
        hits.append(
            Hit(
                kind=item.kind,
                id=item.object_id,
                title=title or " ".join(text.split())[:80],
                snippet=snippet(text, query_terms) or snippet(title, query_terms) or text[:80],
                score=round(item.score, 6),
                conversation_id=item.parent_id,
                details=details.get((item.kind, item.object_id)),
            )
        )
    return hits


def _details(chosen: list[Ranked]) -> dict[tuple[str, int], dict[str, Any]]:
    """What the chosen hits' sources add to them (``RecallSource.details``): a query per kind
    that has any, none for the others."""
    by_kind: dict[str, list[int]] = {}
    for item in chosen:
        by_kind.setdefault(item.kind, []).append(item.object_id)
    found: dict[tuple[str, int], dict[str, Any]] = {}
    for kind, ids in by_kind.items():
        reader = source(kind).details
        if reader is not None:
            found.update({(kind, pk): value for pk, value in reader(ids).items()})
    return found


def snippet(text: str, query_terms: set[str]) -> str:
    """A window of ``text`` around its first word that matches a query term ("" if none)."""
    flat = " ".join(text.split())
    for match in _TOKEN.finditer(flat[:50_000]):
        word = match.group()
        if fold(word) in query_terms or any(term in query_terms for term in terms(word)):
            return window(flat, match.start())
    return ""
