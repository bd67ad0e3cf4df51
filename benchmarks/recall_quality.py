"""Recall quality on benchmarks/recall_set.py: part 2 of benchmarks/recall.py (its docstring
says what is measured), and the figures it publishes.

Django must be set up (recall_build.boot) before anything here is called.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import _fusion, recall_set  # noqa: E402
from benchmarks import recall_build as rb  # noqa: E402
from benchmarks._results import figure  # noqa: E402

if TYPE_CHECKING:
    from memory.recall.engine import Mode

TOP = 10
ENGINE_MODES: tuple[Mode, ...] = ("keyword", "vector", "hybrid")


def ranked_ids(rs: recall_set.RecallSet, *, mode: Mode | None, embedder: Any) -> list[list[int]]:
    """Each question's top 10 message ids, as recall_items ranks them (``embedder`` None: the
    active one, as the default install's recall has it)."""
    from memory import embeddings
    from memory.recall import engine

    chosen = embeddings.ACTIVE if embedder is None else embedder
    used = engine.recall(query=rs.questions[0].text, kinds=["message"], mode=mode, embedder=chosen)
    if mode is not None and used.mode != mode:
        raise RuntimeError(f"asked for {mode}, ranked by {used.mode}: {used.error}")
    return [
        [
            hit.id
            for hit in engine.recall(
                query=q.text,
                kinds=["message"],
                limit=TOP,
                mode=mode,
                catch_up=False,
                embedder=chosen,
            ).hits
        ]
        for q in rs.questions
    ]


def measure_quality(rs: recall_set.RecallSet) -> tuple[str, list[str], dict[str, Any]]:
    """The quality table, what was measured, and each published row's means by category."""
    from memory import embeddings, services
    from memory.recall import engine

    rb.wipe()
    rb.use_fake_embedder(False)
    turn_of = rb.load_recall_set(rs)
    rb.set_semantic(True)
    embedder = embeddings.active_embedder()
    if embedder is None:
        raise RuntimeError("no embedder: semantic recall is on but none is available")
    began = time.perf_counter()
    report = services.reindex()
    info = [
        f"{len(rs.turns)} turns, {len(rs.questions)} questions; default embedder {embedder.name} "
        f"({type(embedder).__name__}, the embedder process)"
        + f"; reindex() {time.perf_counter() - began:.1f} s, {report.embedded} embedded"
        + (f" (error: {report.embed_error})" if report.embed_error else ""),
        f"engine hybrid: {engine.HYBRID_WEIGHT} x standardised cosine + "
        f"{1 - engine.HYBRID_WEIGHT:.1f} x BM25/sum(idf), then the conversation, recency and "
        "period priors (memory/recall/priors.py); the fusion candidates' rows: "
        "benchmarks/_fusion.py",
    ]
    print(info[0], flush=True)
    ranked: dict[str, list[list[int]]] = {}
    for mode in ENGINE_MODES:  # one mode at a time: a mode change reloads the index
        ranked[mode] = ranked_ids(rs, mode=mode, embedder=None)
    ranked["default"] = ranked_ids(rs, mode=None, embedder=None)
    for name in _fusion.CANDIDATES:  # the same two score arrays fused another way
        ranked[name] = [
            _fusion.ranked(name, q.text, embedder, kinds=["message"], top=TOP) for q in rs.questions
        ]
    means = {name: quality_means(rs, ids, turn_of) for name, ids in ranked.items()}
    return quality_table(means), info, means


def quality_means(
    rs: recall_set.RecallSet, ranked: list[list[int]], turn_of: dict[int, str]
) -> dict[str, tuple[int, float, float, float]]:
    """Per category (and "all"): questions, mean recall@5, recall@10 and MRR."""
    out = {}
    for category in ("all", *recall_set.CATEGORIES):
        scores = [
            score([turn_of.get(i, "") for i in ids], set(q.supporting))
            for q, ids in zip(rs.questions, ranked, strict=True)
            if category in ("all", q.category)
        ]
        out[category] = (len(scores), *(statistics.fmean(s[i] for s in scores) for i in range(3)))
    return out  # type: ignore[return-value]


def quality_table(means: dict[str, dict[str, tuple[int, float, float, float]]]) -> str:
    labels = {"default": "default (hybrid, active)"}
    head = ["mode", "category", "questions", "recall@5", "recall@10", "MRR"]
    lines = ["| " + " | ".join(head) + " |", "|---|---|" + "---:|" * 4]
    for name, by_category in means.items():
        for category, (count, *values) in by_category.items():
            cells = [labels.get(name, name), category, str(count), *(f"{v:.3f}" for v in values)]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


# Published figures (name in the table: row of ``means``) and their targets: the
# default install's R@10 overall and on paraphrases; keyword-only no worse than at 24d5a95.
PUBLISHED = {"keyword only": "keyword", "default": "default"}
TARGETS = {
    ("keyword only", "all", "R@10"): 0.675,
    ("default", "all", "R@10"): 0.90,
    ("default", "paraphrase", "R@10"): 0.85,
}


def publish_quality(means: dict[str, dict[str, tuple[int, float, float, float]]]) -> None:
    cells = [("all", "R@5", 1), ("all", "R@10", 2), ("all", "MRR", 3)]
    cells += [("paraphrase", "R@10", 2), ("temporal_update", "MRR", 3)]
    for label, row in PUBLISHED.items():
        if row not in means:
            continue
        for category, metric, index in cells:
            if category != "all" and label != "default":
                continue
            where = "" if category == "all" else f" ({category})"
            figure(
                "recall",
                f"recall set, {label}{where}: {metric}",
                means[row][category][index],
                "",
                target=TARGETS.get((label, category, metric)),
                better="higher",
                note="benchmarks/recall_set.py, kinds=messages, limit=10",
            )


def score(turns: list[str], support: set[str]) -> tuple[float, float, float]:
    first = next((1 / rank for rank, t in enumerate(turns, start=1) if t in support), 0.0)
    return (
        len(support & set(turns[:5])) / len(support),
        len(support & set(turns[:10])) / len(support),
        first,
    )
