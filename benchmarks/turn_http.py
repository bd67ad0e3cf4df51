"""Time to first text through HTTP, as a client sees it: Server-Sent Events (POST /api/chat) and
the WebSocket (/ws/chat/) of a live daphne, against a direct request to the same fake model.

    .venv/bin/python benchmarks/turn_http.py [--runs 30] [--warmup 3] [--keyword-recall]
                                             [--redis-url redis://127.0.0.1:6379/12]

The stack is benchmarks/load.py's ``live_stack``: a throwaway PostgreSQL database, the owner, the
fake model server in its own process (benchmarks/_load_fake.py, no pause before any piece) and
daphne with its channel layer and cache on ``--redis-url`` (flushed; not load.py's database 13,
which a soak may be using). A child process then seeds it as benchmarks/turn_overhead.py does
(1,000 tasks, 1,000 notes, 2,000 memories, a 200-message conversation) with semantic recall on
(``OwnerSettings.semantic_enabled``, the default; keyword recall runs at every turn either way): the recall index is built and every entry is given a random unit vector under the local
embedder's name (as benchmarks/recall_build.py does), the state a finished catch-up leaves; the
vectors' values do not change what a recall costs, and embedding 4,000 items for real would take
most of a minute. Each owner message is new, so its query vector is made by the real local model
inside the turn, as in use. ``--keyword-recall`` leaves semantic recall off.

Then, ``--warmup`` + ``--runs`` times, alternating so all see the same machine state:

- direct: a streamed chat-completions request to the fake model (one kept httpx client), timed
  from the send to its first text delta: the floor;
- SSE: POST /api/chat on the 200-message conversation, timed to the first ``text`` event, read to
  the end of the stream (the turn's after-reply recall pass included);
- direct again;
- WebSocket: a ``send`` frame on one socket kept open, on the same conversation, timed to the
  first ``text`` event; then a short pause, since the consumer's after-reply work goes on after
  ``done``.

Overhead is each transport's time minus the direct time measured just before it, per pair. The
conversation grows by one exchange per turn (two turns a round: 200 messages to 332 with the
defaults); what a turn reads of it is capped (HISTORY_LIMIT messages, then the token budget),
so the prompt does not grow with it. Targets:
overhead p50 <= 12 ms, p95 <= 25 ms, for each transport. Fails (exit 1) on a turn that does not
complete with the model's text; a missed target is reported, not failed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks._load_clients import Session, Turn, login, one_turn, percentile  # noqa: E402
from benchmarks._load_fake import answer_pieces  # noqa: E402
from benchmarks._results import figure  # noqa: E402
from benchmarks._websocket import WebSocket  # noqa: E402
from benchmarks.load import PASSWORD, Stack, live_stack  # noqa: E402

TARGET_P50_MS = 12.0
TARGET_P95_MS = 25.0
REDIS_URL = "redis://127.0.0.1:6379/12"
# A short reply: the first piece is what is timed, the rest only has to be read.
PIECES = 3
QUESTION = "Can you remind me what I planned for the garden this weekend?"
# After a WebSocket turn's ``done`` the consumer still indexes (and embeds) the turn's two
# messages; without this pause that work would land on the next measurement.
SETTLE_SECONDS = 0.2


@dataclass
class Series:
    """Milliseconds to the first text, in run order; ``pairs`` the direct run just before each."""

    times: list[float] = field(default_factory=list)
    pairs: list[float] = field(default_factory=list)

    @property
    def overhead(self) -> list[float]:
        return [t - d for t, d in zip(self.times, self.pairs, strict=True)]


def seed_child(model_url: str, semantic: bool) -> None:
    """(In the child, Django on the stack's database.) turn_overhead's data, recall switched
    and indexed; prints the conversation's id."""
    import django

    django.setup()
    import numpy as np

    from benchmarks._database import analyze
    from benchmarks.recall_build import FAKE_MODEL, write_vectors
    from benchmarks.turn_overhead import _seed
    from memory import services as memory_services
    from memory.embeddings import LocalEmbedder
    from memory.models import RecallEntry
    from talorys.embedder import model_files

    conversation_id = _seed(model_url)
    if semantic and not model_files.available():
        raise SystemExit("the local embedder's model package is missing; or --keyword-recall")
    from talorys.owner.services.settings import owner_settings_update

    owner_settings_update(semantic_enabled=semantic)
    # Every item's words indexed now, not by the first turn's lazy pass (a one-off per install);
    # no vectors made here: the random ones below stand in for the catch-up's.
    memory_services.reindex(embed_limit=0)
    if semantic:
        write_vectors(np.random.default_rng(14))
        RecallEntry.objects.filter(vector_model=FAKE_MODEL).update(vector_model=LocalEmbedder.name)
    analyze()
    print(conversation_id)


def seed(stack: Stack, redis_url: str, *, semantic: bool) -> int:
    data_dir = tempfile.mkdtemp(prefix="talorys-turn-http-")
    env = os.environ | {
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": stack.conninfo,
        "TALORYS_DATA_DIR": data_dir,
        "REDIS_URL": redis_url,
        "LOG_LEVEL": "ERROR",
    }
    command = [sys.executable, __file__, "--seed-child", stack.model_url]
    if not semantic:
        command.append("--keyword-recall")
    try:
        done = subprocess.run(
            command, cwd=ROOT, env=env, check=True, capture_output=True, text=True
        )
    except subprocess.CalledProcessError as error:
        raise SystemExit(f"seeding failed:\n{error.stderr}") from error
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
    return int(done.stdout.split()[-1])


async def direct_first_text(client: httpx.AsyncClient, model_url: str, text: str) -> float:
    """Milliseconds to the fake model's first text delta, asked directly; read to the end."""
    body = {"model": "fake-model", "stream": True, "messages": [{"role": "user", "content": text}]}
    first = None
    sent = time.monotonic()
    async with client.stream("POST", f"{model_url}/chat/completions", json=body) as response:
        async for line in response.aiter_lines():
            if first is None and line.startswith("data: {"):
                choices = json.loads(line.removeprefix("data: ")).get("choices") or [{}]
                if choices[0].get("delta", {}).get("content"):
                    first = time.monotonic() - sent
    if first is None:
        raise RuntimeError("the fake model sent no text")
    return first * 1000


async def sse_first_text(client: httpx.AsyncClient, conversation_id: int, text: str) -> float:
    """Milliseconds from POST /api/chat to the first ``text`` event; the stream read to its end
    and checked: the turn completed with the model's reply."""
    payload = {"conversation_id": conversation_id, "text": text}
    first = None
    name, streamed, status = "", "", None
    sent = time.monotonic()
    async with client.stream("POST", "/api/chat", json=payload) as response:
        if response.status_code != 200:
            raise RuntimeError(f"POST /api/chat: {response.status_code} {await response.aread()}")
        async for line in response.aiter_lines():
            if line.startswith("event: "):
                name = line.removeprefix("event: ")
            elif line.startswith("data: "):
                data = json.loads(line.removeprefix("data: "))
                if name == "text":
                    first = first if first is not None else time.monotonic() - sent
                    streamed += data["delta"]
                elif name in ("done", "error"):
                    status = data.get("status") or f"error {data.get('code')}"
    if status != "complete" or streamed != "".join(answer_pieces(text, PIECES)) or first is None:
        raise RuntimeError(f"SSE turn {text!r}: {status}, streamed {streamed!r}")
    return first * 1000


async def ws_first_text(ws: WebSocket, conversation_id: int, text: str) -> float:
    turn = await one_turn(ws, Turn(text=text, conversation_id=conversation_id), PIECES)
    if turn.outcome != "complete" or turn.first_text is None:
        raise RuntimeError(f"WebSocket turn {text!r}: {turn.outcome}")
    await asyncio.sleep(SETTLE_SECONDS)
    return turn.first_text * 1000


async def measure(
    stack: Stack, session: Session, conversation_id: int, *, runs: int, warmup: int
) -> tuple[list[float], Series, Series]:
    direct: list[float] = []
    sse, ws_series = Series(), Series()
    ws = await WebSocket.connect(session.port, "/ws/chat/", session.cookie)
    # Both clients kept open, as daphne keeps its own client to the model server.
    async with session.client(connections=1) as client, httpx.AsyncClient(timeout=30) as model:
        try:
            for number in range(warmup + runs):
                # A new message each turn: the embedder's query cache must not answer it.
                text = f"{QUESTION} ({number})"
                d1 = await direct_first_text(model, stack.model_url, text)
                s = await sse_first_text(client, conversation_id, text + " over SSE")
                d2 = await direct_first_text(model, stack.model_url, text)
                w = await ws_first_text(ws, conversation_id, text + " over the WebSocket")
                if number >= warmup:
                    direct += [d1, d2]
                    sse.times.append(s)
                    sse.pairs.append(d1)
                    ws_series.times.append(w)
                    ws_series.pairs.append(d2)
        finally:
            await ws.close()
    return direct, sse, ws_series


def message_count(conninfo: str, conversation_id: int) -> int:
    import psycopg

    with psycopg.connect(conninfo) as conn:
        row = conn.execute(
            "SELECT count(*) FROM agent_message WHERE conversation_id = %s", [conversation_id]
        ).fetchone()
    return int(row[0]) if row else 0


def report(direct: list[float], sse: Series, ws: Series, *, recall: str, messages: int) -> None:
    def p(values: list[float]) -> tuple[float, float]:
        return percentile(values, 0.5), percentile(values, 0.95)

    print(
        "turn_http: daphne on PostgreSQL and Redis; 1,000 tasks, 1,000 notes, 2,000 memories, "
        f"a conversation of 200 messages ({messages} at the end); recall {recall}"
    )
    print(f"runs: {len(sse.times)} per transport (after warm-up), direct / SSE / direct / WS")
    print(f"{'':22} {'p50 ms':>8} {'p95 ms':>8}")
    for label, values in (("direct (floor)", direct), ("SSE", sse.times), ("WebSocket", ws.times)):
        print(f"{label:22} {p(values)[0]:8.2f} {p(values)[1]:8.2f}")
    floor50, floor95 = p(direct)
    for label, series in (("SSE", sse), ("WebSocket", ws)):
        p50, p95 = p(series.overhead)
        print(f"{label + ' overhead':22} {p50:8.2f} {p95:8.2f}")
        for share, value, target, floor in (
            ("p50", p50, TARGET_P50_MS, floor50),
            ("p95", p95, TARGET_P95_MS, floor95),
        ):
            verdict = "meets" if value <= target else "MISSES"
            print(
                f"  {label} overhead {share} {value:.2f} ms {verdict} the target of {target:g} ms"
            )
            figure(
                "turn_http",
                f"{label} time-to-first-text overhead {share}",
                value,
                "ms",
                floor=floor,
                floor_name="direct request to the same fake model",
                target=target,
                database="postgresql",
                note=f"recall {recall}; floor: the direct {share}",
            )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30, help="turns per transport")
    parser.add_argument("--warmup", type=int, default=3, help="rounds not counted")
    parser.add_argument("--keyword-recall", action="store_true", help="semantic recall off")
    parser.add_argument("--redis-url", default=REDIS_URL, help="flushed: a database of its own")
    parser.add_argument("--seed-child", metavar="MODEL_URL", help=argparse.SUPPRESS)
    options = parser.parse_args()
    semantic = not options.keyword_recall
    if options.seed_child:
        seed_child(options.seed_child, semantic)
        return 0
    recall = "hybrid (semantic on, local embedder)" if semantic else "keyword (semantic off)"
    with live_stack(
        options.redis_url, pieces=PIECES, pause=0, semantic=not options.keyword_recall
    ) as stack:
        conversation_id = seed(stack, options.redis_url, semantic=semantic)
        session = asyncio.run(login(stack.url, PASSWORD))
        try:
            direct, sse, ws = asyncio.run(
                measure(stack, session, conversation_id, runs=options.runs, warmup=options.warmup)
            )
        except RuntimeError as error:
            print(f"FAIL: {error}")
            return 1
        messages = message_count(stack.conninfo, conversation_id)
    report(direct, sse, ws, recall=recall, messages=messages)
    return 0


if __name__ == "__main__":
    sys.exit(main())
