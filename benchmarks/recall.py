"""Recall: latency of the real engine at 1k-100k items, and ranking quality on the recall set.

    .venv/bin/python benchmarks/recall.py [--quick] [--sizes 1000,10000,100000] [--runs 3]
        [--queries 200] [--database-url postgres://postgres@127.0.0.1:5432/NAME]

Database: SQLite in a temporary directory (removed after), or ``--database-url`` naming a
PostgreSQL database that does not exist yet: the script creates it, migrates it and drops it.

1. Latency, for each N of ``--sizes``: the database is wiped, N items are bulk-created (70%
   conversation messages, 10% each memories, tasks and notes, of benchmarks/recall_set.py's
   sentences shuffled and combined; messages dated a month back) and ``memory.services.
   reindex()`` indexes them ("build s"). A random unit float32 384-d vector is then written
   straight into every RecallEntry for a fake embedder name, as a reindex with that embedder
   would leave it (the real model over 100k texts is too slow on 2 cores); for hybrid,
   ``memory.embeddings.local_embedder`` is monkeypatched to return a fake
   embedder whose vector for a text is a fixed random unit vector (memory.embeddings.
   active_embedder runs unpatched). Each run empties the process's in-memory index (INDEX.
   _reset) and times the first call, which loads it ("load s", keyword / hybrid), then after 10
   warm-up calls times ``memory.selectors.recall_items(query=q, limit=10)`` over ``--queries``
   queries (2-8 word windows of the recall set's questions): keyword (semantic_enabled off) and
   hybrid (on), each with catch_up=False and with the default catch_up=True (the lazy pass with
   nothing changed). The floor is plain numpy over the same N x 384 matrix: matrix @ q,
   argpartition top 10. With ``--runs 3`` every figure is the median of the runs' figures.
   Peak RSS is the process's (resource.getrusage), so it only grows from row to row.
2. Quality on ``recall_set.build()``: each turn a Message (one Conversation per session, dated
   on its day), semantic recall on with the default install's embedder (memory.embeddings.
   active_embedder), ``reindex()`` embeds them; each question ranked by ``engine.recall(query=
   question, kinds=["message"], limit=10, mode=...)`` for keyword, vector and hybrid, then as
   the default install ranks (mode None: hybrid with the active embedder: the embedder
   process, started for the run). A hit is relevant when its message is a supporting turn: recall@k (share
   of supporting turns in the top k) and MRR (1 / rank of the first relevant hit, 0 past 10),
   averaged over questions. The fusion candidates' rows (benchmarks/_fusion.py: the engine's two
   score arrays fused another way, reciprocal rank fusion among them) follow. R@5, R@10 and
   MRR of keyword only and the default are published (benchmarks/_results.py),
   with the default's paraphrase R@10 and temporal-update MRR.

--quick: sizes 1000,10000, 50 queries, one run. --quality-only: part 2 alone.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shlex
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import recall_build as rb  # noqa: E402
from benchmarks import recall_set  # noqa: E402
from benchmarks._database import analyze  # noqa: E402
from benchmarks._results import figure  # noqa: E402
from benchmarks.recall_quality import measure_quality, publish_quality  # noqa: E402

if TYPE_CHECKING:
    from memory.recall.engine import Mode

WARMUP = 10
TOP = 10
LATENCY_KEYS = ("keyword", "keyword+catch-up", "hybrid", "hybrid+catch-up", "numpy floor")
ENGINE_MODES: tuple[Mode, ...] = ("keyword", "vector", "hybrid")
T = TypeVar("T")


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))]


def timed_ms(call: Callable[[], object]) -> float:
    began = time.perf_counter()
    call()
    return (time.perf_counter() - began) * 1000


def each_ms(call: Callable[[T], object], items: list[T]) -> list[float]:
    out = []
    for item in items:
        began = time.perf_counter()
        call(item)
        out.append((time.perf_counter() - began) * 1000)
    return out


def p50_p95(values: list[float]) -> tuple[float, float]:
    return percentile(values, 0.5), percentile(values, 0.95)


def make_queries(rs: recall_set.RecallSet, count: int, rng: random.Random) -> list[str]:
    """Windows of 2-8 words of the recall set's questions."""
    queries: list[str] = []
    while len(queries) < count:
        words = rng.choice(rs.questions).text.split()
        k = rng.randint(2, 8)
        start = rng.randrange(max(1, len(words) - k + 1))
        queries.append(" ".join(words[start : start + k]))
    return queries


def tree_label() -> str:
    """The commit measured, and whether the working tree differs from it."""

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, check=False
        ).stdout.strip()

    changed = [line for line in git("status", "--porcelain").splitlines() if line]
    return f"{git('rev-parse', '--short', 'HEAD') or '?'}" + (
        f" + uncommitted changes in {len(changed)} files" if changed else " (clean)"
    )


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kilobytes on Linux


def floor_top(matrix: np.ndarray, query: np.ndarray) -> np.ndarray:
    scores = matrix @ query
    best = np.argpartition(-scores, TOP - 1)[:TOP]
    return best[np.argsort(-scores[best])]


def empty_index() -> None:
    from memory.recall.index import INDEX

    with INDEX.lock:
        INDEX._reset(generation="", vector_model="")


def one_run(queries: list[str], matrix: np.ndarray, notes: list[str]) -> dict[str, Any]:
    """Load times (s) and p50/p95 (ms) of each way of recalling, once."""
    from memory.recall import engine
    from memory.recall.index import INDEX
    from memory.selectors import recall_items

    def series(catch_up: bool) -> tuple[float, float]:
        for q in queries[:WARMUP]:
            recall_items(query=q, limit=TOP, catch_up=catch_up)
        return p50_p95(
            each_ms(lambda q: recall_items(query=q, limit=TOP, catch_up=catch_up), queries)
        )

    out: dict[str, Any] = {}
    rb.set_semantic(False)
    rb.use_fake_embedder(False)
    empty_index()
    out["load keyword"] = timed_ms(
        lambda: recall_items(query=queries[0], limit=TOP, catch_up=False)
    )
    out["keyword"] = series(False)
    out["keyword+catch-up"] = series(True)
    rb.set_semantic(True)
    rb.use_fake_embedder(True)
    empty_index()
    out["load hybrid"] = timed_ms(lambda: recall_items(query=queries[0], limit=TOP, catch_up=False))
    check = engine.recall(query=queries[0], limit=TOP, catch_up=False)
    if check.mode != "hybrid" or INDEX.vector_count() != len(matrix):
        raise RuntimeError(f"not hybrid: {check.mode} {check.error} {INDEX.vector_count()}")
    out["hybrid"] = series(False)
    out["hybrid+catch-up"] = series(True)
    if not notes:  # once a size: what a keyword-mode call costs while semantic recall is on
        switch = timed_ms(lambda: recall_items(query=queries[1], mode="keyword", catch_up=False))
        back = timed_ms(lambda: recall_items(query=queries[2], catch_up=False))
        notes.append(
            f"mode='keyword' call {switch / 1000:.2f} s, next hybrid call {back / 1000:.2f} s"
        )
    vectors = [rb.unit_vector(q) for q in queries]
    out["numpy floor"] = p50_p95(each_ms(lambda v: floor_top(matrix, v), vectors))
    return out


def measure_size(
    n: int, pool: list[str], queries: list[str], runs: int, seed: int
) -> tuple[dict[str, Any], list[str]]:
    from memory import services

    rb.wipe()
    began = time.perf_counter()
    rb.seed(n, pool, random.Random(seed))
    seeded = time.perf_counter() - began
    began = time.perf_counter()
    report = services.reindex()
    built = time.perf_counter() - began
    analyze()
    began = time.perf_counter()
    matrix = rb.write_vectors(np.random.default_rng(seed))
    written = time.perf_counter() - began
    print(
        f"N={n:,}: items bulk-created in {seeded:.1f} s; reindex() {built:.1f} s "
        f"({report.written:,} entries: {report.kinds}); vectors written in {written:.1f} s",
        flush=True,
    )
    notes: list[str] = []
    results = []
    for run in range(runs):
        results.append(one_run(queries, matrix, notes))
        r = results[-1]
        print(
            f"  run {run + 1}: load {r['load keyword'] / 1000:.2f} / {r['load hybrid'] / 1000:.2f} s, "
            + ", ".join(f"{k} {r[k][0]:.2f}/{r[k][1]:.2f} ms" for k in LATENCY_KEYS),
            flush=True,
        )
    row: dict[str, Any] = {"N": n, "build": built, "rss": peak_rss_mb()}
    for key in ("load keyword", "load hybrid"):
        row[key] = statistics.median(r[key] for r in results) / 1000
    for key in LATENCY_KEYS:
        row[key] = tuple(statistics.median(r[key][i] for r in results) for i in (0, 1))
    return row, notes


def latency_table(rows: list[dict[str, Any]], runs: int, count: int) -> str:
    head = ["N", "build s", "load s (kw / hybrid)"]
    head += [f"{k} p50 / p95 ms" for k in LATENCY_KEYS] + ["peak RSS MB"]
    lines = [
        f"Latency: recall_items(limit=10), {count} queries a run, median of {runs} run(s)",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "|".join("---:" for _ in head) + "|",
    ]
    for row in rows:
        cells = [f"{row['N']:,}", f"{row['build']:.1f}"]
        cells.append(f"{row['load keyword']:.2f} / {row['load hybrid']:.2f}")
        cells += [f"{row[k][0]:.2f} / {row[k][1]:.2f}" for k in LATENCY_KEYS]
        cells.append(f"{row['rss']:.0f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--database-url", default="")
    parser.add_argument("--quick", action="store_true", help="sizes 1000,10000, 50 queries, 1 run")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--quality-only", action="store_true", help="skip the latency part")
    options = parser.parse_args()
    sizes = [int(s) for s in options.sizes.split(",") if s]
    if options.quick:
        sizes, options.queries, options.runs = [s for s in sizes if s <= 10_000], 50, 1
    if options.quality_only:
        sizes = []
    scratch = rb.boot(options.database_url or None)
    try:
        print("command:", shlex.join([sys.executable, *sys.argv]))
        print(f"database: {rb.database_label()}; tree: {tree_label()}")
        print(
            f"cores: {os.cpu_count()} (usable: {len(os.sched_getaffinity(0))}); numpy {np.__version__}"
        )
        print(
            f"vectors for latency: {rb.use_fake_embedder(True)} (its vector: random, fixed per text)"
        )
        rb.use_fake_embedder(False)
        rs = recall_set.build(options.seed)
        pool = rb.corpus(rs)
        queries = make_queries(rs, options.queries, random.Random(options.seed))
        rows, notes = [], []
        for n in sizes:
            row, size_notes = measure_size(n, pool, queries, options.runs, options.seed)
            rows.append(row)
            notes += [f"N={n:,}: {note}" for note in size_notes]
        for row in rows:
            for mode in ("keyword", "hybrid"):
                figure(
                    "recall",
                    f"recall_items(limit=10), {mode}, N={row['N']:,}: p50",
                    row[mode][0],
                    "ms",
                    floor=row["numpy floor"][0],
                    floor_name="numpy brute-force top 10 over the same vectors",
                    database=rb.database_label(),
                )
        quality, info, means = measure_quality(rs)
        publish_quality(means)
        print("\n" + latency_table(rows, options.runs, len(queries)))
        print(
            "\nSemantic on: one mode='keyword' call, then one hybrid call (~load s if it reloads):"
        )
        print("\n".join(f"- {note}" for note in notes))
        print("\nQuality on benchmarks/recall_set.py (kinds=['messages'], limit=10)\n")
        print("\n".join(info) + "\n")
        print(quality)
    finally:
        rb.close(scratch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
