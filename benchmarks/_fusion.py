"""The fusion candidates measured beside the engine's hybrid (issue: "fusion that never loses").

Each candidate turns the engine's own two score arrays for a query, over the index as recall
sees it (INDEX.keyword_scores: BM25 over the query's total IDF; INDEX.vector_scores: cosines,
NaN without a vector), into one ranking, then applies the engine's priors (the conversation,
recency and the period the question names: engine.with_priors) except where the name says
"no priors". Only the fusion differs, so the rows compare fusions, not pipelines. The engine's
chosen fusion is memory.recall.engine.hybrid_scores ("standardised" below).

Django must be set up and the index's vectors made by ``embedder`` before these are called.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

RERANK_DEPTH = 50  # keyword-first: how many keyword hits the cosine re-ranks
RRF_K = 60
OLD_WEIGHT = 0.7  # the engine's raw-cosine weight at 5b9aeb3


def _raw(lexical: np.ndarray, cosine: np.ndarray, floor: float) -> np.ndarray:
    """The engine before: 0.7 x the raw cosine (0 at or below the floor) + 0.3 x keyword."""
    raw = np.clip(np.nan_to_num(cosine, nan=0.0), 0.0, 1.0)
    raw[raw <= floor] = 0.0
    return OLD_WEIGHT * raw + (1 - OLD_WEIGHT) * np.minimum(lexical, 1.0)


def _minmax(lexical: np.ndarray, cosine: np.ndarray, floor: float) -> np.ndarray:
    """Each score scaled to [0, 1] over the collection (its min to its max), then 0.5 : 0.5."""
    known = np.nan_to_num(cosine, nan=np.nanmin(cosine) if np.isfinite(cosine).any() else 0.0)
    span = max(float(known.max() - known.min()), 1e-9)
    top = max(float(lexical.max()), 1e-9)
    return 0.5 * (known - known.min()) / span + 0.5 * lexical / top


def _rrf(lexical: np.ndarray, cosine: np.ndarray, floor: float) -> np.ndarray:
    """Reciprocal rank fusion (k=60) of the two full rankings."""
    out = np.zeros(len(lexical))
    for scores in (lexical, np.nan_to_num(cosine, nan=-1.0)):
        ranks = np.empty(len(scores))
        ranks[np.argsort(-scores, kind="stable")] = np.arange(1, len(scores) + 1)
        out += 1.0 / (RRF_K + ranks)
    return out


def _keyword_first(lexical: np.ndarray, cosine: np.ndarray, floor: float) -> np.ndarray:
    """The keyword ranking's top RERANK_DEPTH, re-ranked by the engine's hybrid score; the rest
    not ranked at all."""
    from memory.recall import engine

    out = np.zeros(len(lexical))
    head = np.argsort(-lexical, kind="stable")[:RERANK_DEPTH]
    head = head[lexical[head] > 0]
    out[head] = 1.0 + engine.hybrid_scores(lexical, cosine, floor=floor)[head]
    return out


def _standardised(lexical: np.ndarray, cosine: np.ndarray, floor: float) -> np.ndarray:
    from memory.recall import engine

    return engine.hybrid_scores(lexical, cosine, floor=floor)


Fusion = Callable[[np.ndarray, np.ndarray, float], np.ndarray]
CANDIDATES: dict[str, tuple[Fusion, str]] = {
    # name: (fusion, which of the engine's priors: "all", "none", or all but the period's)
    "raw cosine 0.7 (5b9aeb3)": (_raw, "all"),
    "rrf, no priors": (_rrf, "none"),
    "rrf": (_rrf, "all"),
    "min-max 0.5": (_minmax, "all"),
    f"keyword-first, top {RERANK_DEPTH} re-ranked": (_keyword_first, "all"),
    "standardised, no period prior": (_standardised, "no period"),
    "standardised (the engine's)": (_standardised, "all"),
}


def ranked(name: str, question: str, embedder: Any, *, kinds: list[str], top: int) -> list[int]:
    """The object ids of ``question``'s top ``top`` by candidate ``name`` (no liveness check:
    the benchmarks bin nothing)."""
    from django.utils import timezone

    from memory import embeddings
    from memory.recall import engine
    from memory.recall.index import INDEX
    from memory.recall.periods import periods
    from memory.recall.text import terms

    fuse, priors = CANDIDATES[name]
    vector = embeddings.embed_query(embedder, question)
    with INDEX.lock:
        INDEX.sync(vector_model=embedder.name)
        lexical = INDEX.keyword_scores(terms(question), kinds=kinds)
        cosine = INDEX.vector_scores(vector, kinds=kinds)
        scores = fuse(lexical, cosine, embedder.floor).astype(np.float32)
        if priors != "none":
            named = periods(question, now=timezone.now()) if priors == "all" else []
            scores = engine.with_priors(scores, named)
        return [item.object_id for item in INDEX.best(scores, top)]


class WholeText:
    """``embedder`` reading each document whole (one vector of its text), under another name so
    its vectors are stored apart: the row that shows what the sentences' mean is worth."""

    sentences = False

    def __init__(self, embedder: Any) -> None:
        self._embedder = embedder
        self.name = f"{embedder.name}:whole"
        self.floor = embedder.floor

    def embed(self, texts: list[str]) -> np.ndarray:
        return self._embedder.embed(texts)


def embed_all(embedder: Any) -> None:
    """Every entry's vector made again by ``embedder`` (what ``reindex(full=True)`` does with
    the active one)."""
    from memory.recall import writer

    writer._embed_pending(
        limit=None, report=writer.ReindexReport(), everything=True, embedder=embedder
    )
