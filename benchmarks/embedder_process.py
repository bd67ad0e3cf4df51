"""The embedder process against the in-process runtime it replaced: memory, time, agreement.

    .venv/bin/python benchmarks/embedder_process.py [--runs 3] [--queries 200]
    .venv/bin/python benchmarks/embedder_process.py --web-rss --root DIR --python PY

Each figure is the median of ``--runs`` runs, each in fresh processes:

- the embedder process (``python -m talorys.embedder`` on a socket of a temp dir, the
  optimised graph already cached): RSS after load, and after embedding 1,000 texts of about 30
  words; a query's time through the socket (p50 of ``--queries``, one text per request, as a
  recall asks: OpenAIEmbeddingsClient over the Unix socket, as memory/embeddings.py does);
  throughput for the 1,000 texts in requests of 64 (the lazy pass's size);
- agreement with the removed numpy runtime: the minimum cosine with its stored vectors
  (tests/memory/minilm_numpy_reference.json);
- ``--web-rss``: a web process's RSS at rest after a chat turn and a search with semantic
  recall on, for the checkout at ``--root`` run by ``--python`` (an old checkout with its own
  runtime venv gives the figure before the change): talorys_setup on a temp SQLite data dir,
  the embedder when that checkout has one, daphne, a login, one turn (demo provider), one search.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._database import free_port  # noqa: E402
from benchmarks._results import figure  # noqa: E402
from talorys.providers.openai_embeddings import (  # noqa: E402
    EmbeddingsConfig,
    OpenAIEmbeddingsClient,
)

WORDS = [
    "the",
    "owner",
    "wrote",
    "a",
    "note",
    "about",
    "the",
    "garden",
    "plans",
    "and",
    "the",
    "weekend",
    "trip",
    "to",
    "the",
    "coast",
    "with",
    "family",
    "friends",
    "booking",
    "ferry",
    "tickets",
    "early",
    "before",
    "prices",
    "rise",
    "again",
    "this",
    "summer",
]
REFERENCE = ROOT / "tests" / "memory" / "minilm_numpy_reference.json"


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for {pid}")


def texts_of_30_words(count: int) -> list[str]:
    return [
        " ".join(WORDS[(i * 7 + j) % len(WORDS)] for j in range(30)) + f" {i}" for i in range(count)
    ]


def start_embedder(folder: Path, cache: Path) -> subprocess.Popen:
    sock = folder / "embedder.sock"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "talorys.embedder",
            "--socket",
            str(sock),
            "--cache-dir",
            str(cache),
        ],
        cwd=ROOT,
        stderr=(folder / "embedder.log").open("w"),
    )
    deadline = time.monotonic() + 60
    while not sock.exists():
        if time.monotonic() > deadline or process.poll() is not None:
            raise RuntimeError("the embedder did not start")
        time.sleep(0.05)
    return process


def client(folder: Path) -> OpenAIEmbeddingsClient:
    import httpx

    config = EmbeddingsConfig(base_url="http://embedder/v1", model="m", timeout=60, batch_size=64)
    return OpenAIEmbeddingsClient(
        config, transport=httpx.HTTPTransport(uds=str(folder / "embedder.sock"))
    )


def one_run(queries: int, cache: Path) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="tal-bench-") as temp:
        folder = Path(temp)
        process = start_embedder(folder, cache)
        try:
            ask = client(folder)
            ask.embed_batch(["warm up"])
            loaded = rss_mb(process.pid)
            times = []
            for i in range(queries):
                began = time.perf_counter()
                ask.embed_batch([f"Which instrument does my kid play, question {i}?"])
                times.append((time.perf_counter() - began) * 1000)
            docs = texts_of_30_words(1000)
            began = time.perf_counter()
            for start in range(0, len(docs), 64):
                ask.embed_batch(docs[start : start + 64])
            per_s = len(docs) / (time.perf_counter() - began)
            stored = json.loads(REFERENCE.read_text())
            old = np.frombuffer(base64.b64decode(stored["float16_base64"]), dtype=np.float16)
            old = old.reshape(len(stored["texts"]), 384).astype(np.float32)
            new = np.array(ask.embed_batch(stored["texts"]), dtype=np.float32)
            agreement = float((new * old).sum(axis=1).min())
            return {
                "rss_loaded_mb": loaded,
                "rss_after_batch_mb": rss_mb(process.pid),
                "query_p50_ms": statistics.median(times),
                "texts_per_s": per_s,
                "min_cosine_vs_numpy": agreement,
            }
        finally:
            process.terminate()
            process.wait()


def web_rss(root: Path, python: str) -> float:
    """A daphne's RSS (MB) at rest after a turn and a search, semantic recall on (see above)."""
    import httpx

    with tempfile.TemporaryDirectory(prefix="tal-web-") as data:
        env = os.environ | {
            "TALORYS_DATA_DIR": data,
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "TALORYS_OWNER_PASSWORD": "correct horse battery staple",
            "PYTHONPATH": str(root),
        }
        env.pop("TALORYS_EMBEDDER_URL", None)
        run = {"cwd": root, "env": env, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
        subprocess.run([python, "manage.py", "talorys_setup", "--noinput"], check=True, **run)
        children = []
        if (root / "talorys" / "embedder").is_dir():
            children.append(subprocess.Popen([python, "manage.py", "talorys_embedder"], **run))
        port = free_port()
        daphne = [python, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port)]
        web = subprocess.Popen([*daphne, "config.asgi:application"], **run)
        children.append(web)
        try:
            return _turn_and_measure(httpx, f"http://127.0.0.1:{port}", web.pid, Path(data))
        finally:
            for child in children:
                child.terminate()
                child.wait()


def _turn_and_measure(httpx, url: str, pid: int, data: Path) -> float:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + 60
    while True:
        try:
            httpx.get(f"{url}/api/health", timeout=2)
            break
        except httpx.TransportError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
    web = httpx.Client(base_url=url, timeout=60)
    login = web.post(
        "/api/auth/login", json={"username": "owner", "password": "correct horse battery staple"}
    )
    web.headers["X-CSRFToken"] = login.json()["csrf_token"]
    web.post("/api/memories", json={"text": "My daughter started the cello"})
    with web.stream("POST", "/api/chat", json={"text": "Which instrument does my kid play?"}) as r:
        for _ in r.iter_lines():
            pass
    found = web.get("/api/search", params={"q": "which instrument does my kid play"}).json()
    if found.get("mode") != "hybrid":
        raise RuntimeError(f"semantic recall was not used: {found.get('mode')}")
    time.sleep(2)  # at rest: the turn's after-reply pass has ended
    return rss_mb(pid)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--web-rss", action="store_true")
    parser.add_argument("--root", type=Path, default=ROOT)
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args()
    if args.web_rss:
        values = [web_rss(args.root.resolve(), args.python) for _ in range(args.runs)]
        print(
            f"web RSS at rest after a turn ({args.root}): {statistics.median(values):.0f} MB "
            f"(runs: {', '.join(f'{v:.0f}' for v in values)})"
        )
        return 0
    with tempfile.TemporaryDirectory(prefix="tal-cache-") as cache:
        # The graph optimised once, as on an install's first start; the runs then load it.
        one_run(1, Path(cache))
        runs = [one_run(args.queries, Path(cache)) for _ in range(args.runs)]
    for key in runs[0]:
        values = [r[key] for r in runs]
        print(
            f"{key}: {statistics.median(values):.3f} (runs: {', '.join(f'{v:.3f}' for v in values)})"
        )
    median = {key: statistics.median(r[key] for r in runs) for key in runs[0]}
    figure(
        "embedder",
        "embedder process: RSS after a batch",
        round(median["rss_after_batch_mb"]),
        "MB",
        target=200,
    )
    figure(
        "embedder",
        "embedder process: query p50 via socket",
        round(median["query_p50_ms"], 2),
        "ms",
        target=10,
    )
    figure(
        "embedder",
        "embedder process: texts/s (30 words)",
        round(median["texts_per_s"]),
        "",
        target=100,
        better="higher",
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
