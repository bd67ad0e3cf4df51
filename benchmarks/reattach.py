"""Re-attaching to a running reply (agent/live): how soon a reloaded chat page shows the reply's
text again, and what each attached page costs the web process.

    .venv/bin/python benchmarks/reattach.py [--reloads 15] [--warmup 2] [--sse 8] [--pages 200]
                                            [--variant both|embedded|redis] [--sqlite]
                                            [--redis-url redis://127.0.0.1:6379/10]

Two variants, each on a stack of its own: the fake model server in its own process
(benchmarks/_load_fake.py, a long reply: ``PIECES`` deltas, ``PAUSE`` s before each, so every
turn is still streaming when it is cancelled at the end of its phase), the owner (semantic recall
off: no turn here recalls anything worth timing) and daphne.

- embedded: SQLite, no REDIS_URL, one daphne: the page re-attaches to the turn in the same
  process (agent/live/turns.py);
- redis: PostgreSQL and REDIS_URL (``--redis-url``, else TALORYS_BENCH_REDIS_URL, else database 10;
  flushed), two daphnes on them: the turn runs on A and every page re-attaches on B, which follows
  it through its copy in Redis (agent/live/mirror.py). Skipped, with the reason, without
  PostgreSQL (or with ``--sqlite``) or Redis.

Reload: a page (a /ws/chat/ socket with the session cookie and Origin, as the browser opens it)
sends a turn and reads its first text; then ``--warmup`` + ``--reloads`` times it closes
mid-reply, a new page connects and sends ``{"type": "attach", "conversation_id"}``, and the time
from the start of the reconnect to the first event carrying text (the snapshot, with the text so
far) is taken, with the new socket's handshake (101) alone as the floor; the page then reads two
live deltas, checked to continue the snapshot's text exactly. Then ``--sse`` times the same
through GET /api/conversations/{id}/stream on a new connection. Target: median <= 100 ms (a page
whose text is back within a tenth of a second reads as if it had never left).

Memory: a new turn; ``--pages`` sockets open on the attaching process (RSS before and after: what
an idle page costs), then each sends the attach frame and is read until its snapshot and a live
delta came, or ``LIVE_SECONDS`` passed (RSS again; how many pages got a live delta is a figure
of its own, with all of them as its target). Per page: the growth over ``--pages``; target <= 100 KiB (a thousand pages
within 100 MB). What the turn itself holds is its ring buffer of the latest ``BUFFER_EVENTS``
events: its size is computed from the events the page that started the turn received (it follows
from the first event: JSON bytes as sent, and a Python-object estimate made in this process),
not read out of daphne. Each page's queue is bounded by ``FOLLOWER_QUEUE`` events but holds
about none while the page keeps up, as these do; with Redis the stream copy's length and
``MEMORY USAGE`` are read from Redis. Then the turn is cancelled and every page must see it end.

Exits 1, after the figures, when a page is given text that does not continue the reply, an
attach is refused, or an attached page does not see the turn end (its ``done``, or a final
snapshot) within ``END_SECONDS`` of the cancel; a missed target is reported, not failed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks._load_clients import Session, login  # noqa: E402
from benchmarks._load_fake import answer_pieces  # noqa: E402
from benchmarks._reattach_pages import (  # noqa: E402
    Garbled,
    Pages,
    Reload,
    attach_all,
    attach_page,
    cancel_turn,
    open_sockets,
    sse_first_text,
    start_turn,
    wait_until,
    websocket_reloads,
)
from benchmarks._reattach_stack import (  # noqa: E402
    PASSWORD,
    PIECES,
    Stack,
    on,
    redis_skip,
    stack,
)
from benchmarks._results import figure  # noqa: E402
from benchmarks._websocket import WebSocket  # noqa: E402
from benchmarks.load import rss_mb  # noqa: E402

TARGET_RELOAD_MS = 100.0
TARGET_PAGE_KIB = 100.0
LIVE_SECONDS = 20.0  # for every attached page to get its snapshot and a live delta
END_SECONDS = 60.0  # for every attached page to see the turn end, after its cancel
REDIS_URL = "redis://127.0.0.1:6379/10"


@dataclass
class ReloadRun:
    websocket: list[Reload]  # after the warm-up
    sse: list[Reload]


async def reload_phase(
    turn_on: Session, attach_on: Session, *, reloads: int, warmup: int, sse: int
) -> ReloadRun:
    question = "Tell me a long story about the garden (reloads)"
    reply = "".join(answer_pieces(question, PIECES))
    page, conversation_id, _ = await start_turn(turn_on, question)
    measured = await websocket_reloads(page, attach_on, conversation_id, reply, warmup + reloads)
    over_sse = [
        await sse_first_text(attach_on, conversation_id, reply) for _ in range(warmup + sse)
    ]
    page, _ = await attach_page(attach_on.port, attach_on.cookie, conversation_id)
    status = await cancel_turn(page, conversation_id)
    await page.close()
    if status != "cancelled":
        raise RuntimeError(f"the reloads' turn ended {status}, not cancelled")
    return ReloadRun(measured[warmup:], over_sse[warmup:])


def py_bytes(value: Any) -> int:
    """An estimate of what ``value`` takes as Python objects (dict keys not counted: the event
    types' keys are the same interned strings in every event)."""
    size = sys.getsizeof(value)
    if isinstance(value, dict):
        size += sum(py_bytes(item) for item in value.values())
    elif isinstance(value, list):
        size += sum(py_bytes(item) for item in value)
    return size


async def follow_all(page: WebSocket, events: list[dict[str, Any]]) -> str:
    """The starting page's reader: every event of its turn into ``events``; the final status."""
    while True:
        event = await asyncio.wait_for(page.receive_json(), 120)
        events.append(event)
        if event.get("type") == "done":
            return str(event.get("status"))


async def memory_phase(
    turn_on: Session, attach_on: Session, attach_pid: int, count: int, stack_: Stack
) -> dict[str, float]:
    question = "Tell me a long story about the garden (pages)"
    starter, conversation_id, events = await start_turn(turn_on, question)
    reader = asyncio.create_task(follow_all(starter, events))
    warm, _ = await attach_page(attach_on.port, attach_on.cookie, conversation_id)
    await warm.close()  # the attach path's first use (imports, pools) is not a page's cost
    await asyncio.sleep(1.0)
    before = rss_mb(attach_pid)
    pages = Pages(sockets=await open_sockets(attach_on, count))
    await asyncio.sleep(1.0)
    idle = rss_mb(attach_pid)
    attach_all(pages, conversation_id)
    # A page stalled after its snapshot is reported (how many followed live), not failed; the
    # wait is bounded so that the turn still streams when the RSS is read.
    with suppress(RuntimeError):
        await wait_until(lambda: pages.live >= count, LIVE_SECONDS, "live deltas")
    for error in sorted(set(pages.errors)):
        print(f"  an attached page was sent an error: {error}")
    await asyncio.sleep(1.0)
    attached = rss_mb(attach_pid)
    held = events[-stack_.bounds["buffer"] :]
    figures = {
        "rss_before_mb": before,
        "idle_kib": (idle - before) * 1024 / count,
        "page_kib": (attached - before) * 1024 / count,
        "attach_kib": (attached - idle) * 1024 / count,
        "live": pages.live,
        "seq": len(events),  # it follows from the first: every event the turn published
        "held_events": len(held),
        "held_json_kib": sum(len(json.dumps(e)) for e in held) / 1024,
        "held_py_kib": sum(py_bytes(e) for e in held) / 1024,
        "text_kib": len("".join(e.get("delta", "") for e in events)) / 1024,
    }
    if stack_.redis_url:
        figures |= await redis_copy(stack_.redis_url, events[-1]["id"])
    figures["ended"] = await end_turn(starter, reader, pages, conversation_id)
    return figures


async def end_turn(
    starter: WebSocket, reader: asyncio.Task[str], pages: Pages, conversation_id: int
) -> int:
    """Cancel the turn from the page that started it: how many attached pages then saw its end
    within END_SECONDS."""
    await starter.send_json({"type": "cancel", "conversation_id": conversation_id})
    status = await reader
    with suppress(RuntimeError):
        await wait_until(lambda: pages.done >= len(pages.sockets), END_SECONDS, "the end")
    ended = pages.done
    for task in pages.tasks:
        task.cancel()
    await asyncio.gather(*pages.tasks, return_exceptions=True)
    await asyncio.gather(
        starter.close(), *(ws.close() for ws in pages.sockets), return_exceptions=True
    )
    if status != "cancelled":
        raise RuntimeError(f"the pages' turn ended {status}, not cancelled")
    return ended


async def redis_copy(redis_url: str, last_id: str) -> dict[str, float]:
    """The Redis copy of the turn (mirror.py's stream): its entries and its memory."""
    import redis.asyncio as aioredis

    key = f"talorys:turn:{last_id.split('.')[0]}:events"
    client = aioredis.Redis.from_url(redis_url)
    try:
        length = await client.xlen(key)
        usage = await client.memory_usage(key) or 0
    finally:
        await client.aclose()
    return {"stream_entries": length, "stream_kib": usage / 1024}


def report_reloads(run: ReloadRun, variant: str, where: str, database: str) -> None:
    print(f"reload -> first re-attached text ({where}), ms from the start of the reconnect:")
    print(f"  {'':24} {'n':>3} {'median':>8} {'min':>8} {'max':>8}")
    rows = [
        ("WebSocket, handshake", [r.handshake for r in run.websocket]),
        ("WebSocket, first text", [r.first_text for r in run.websocket]),
        ("SSE, first text", [r.first_text for r in run.sse]),
    ]
    for label, values in rows:
        if values:
            print(
                f"  {label:24} {len(values):3d} {statistics.median(values):8.2f} "
                f"{min(values):8.2f} {max(values):8.2f}"
            )
    median = statistics.median(r.first_text for r in run.websocket)
    figure(
        "reattach",
        f"reload to first text, WebSocket, {variant}: median",
        median,
        "ms",
        floor=statistics.median(r.handshake for r in run.websocket),
        floor_name="the new /ws/chat/ socket's handshake alone, in the same reloads",
        target=TARGET_RELOAD_MS,
        database=database,
        note=where,
    )
    if run.sse:
        figure(
            "reattach",
            f"reload to first text, SSE, {variant}: median",
            statistics.median(r.first_text for r in run.sse),
            "ms",
            target=TARGET_RELOAD_MS,
            database=database,
            note=where,
        )


def print_memory(m: dict[str, float], count: int, stack_: Stack) -> None:
    bounds = stack_.bounds
    print(
        f"memory of the attaching process, {count} pages (RSS {m['rss_before_mb']:.1f} MB before):"
    )
    print(f"  per idle /ws/chat/ socket        {m['idle_kib']:8.1f} KiB (measured, RSS)")
    print(f"  per page, socket + attach        {m['page_kib']:8.1f} KiB (measured, RSS)")
    print(f"    of which the attach            {m['attach_kib']:8.1f} KiB")
    print(
        f"  the turn's buffer: {m['held_events']:.0f} events (bound {bounds['buffer']}; the turn "
        f"was at event {m['seq']:.0f}), {m['held_json_kib']:.1f} KiB as JSON, about "
        f"{m['held_py_kib']:.1f} KiB as Python objects (computed from the events received)"
    )
    share = bounds["buffer"] / max(m["held_events"], 1)
    print(
        f"  at its bound, with events of this size (estimate): {m['held_json_kib'] * share:.1f} "
        f"KiB as JSON, about {m['held_py_kib'] * share:.1f} KiB as Python objects"
    )
    print(f"  the reply's text so far: {m['text_kib']:.1f} KiB (held until the turn ends)")
    print(
        f"  per page's queue: bounded at {bounds['queue']} events (not measured: these pages "
        "keep up, so it holds about none)"
    )
    if "stream_entries" in m:
        print(
            f"  the Redis copy: {m['stream_entries']:.0f} entries (trimmed to about "
            f"{bounds['stream']}), {m['stream_kib']:.1f} KiB (MEMORY USAGE, measured)"
        )


def report_memory(m: dict[str, float], count: int, stack_: Stack, variant: str, db: str) -> None:
    print_memory(m, count, stack_)
    bounds = stack_.bounds
    print(f"  pages that saw the turn end after its cancel: {m['ended']:.0f} of {count}")
    if m["live"] < count:
        print(
            f"  ONLY {m['live']:.0f} of {count} pages got a live delta within {LIVE_SECONDS:g} s "
            "of their attach (the others had their snapshot, then nothing)"
        )
    figure(
        "reattach",
        f"attached pages following live ({count} attached), {variant}",
        m["live"],
        "pages",
        target=count,
        better="higher",
        database=db,
        note=f"a live delta within {LIVE_SECONDS:g} s of the attach",
    )
    figure(
        "reattach",
        f"RSS per attached page ({count} pages), {variant}",
        m["page_kib"],
        "KiB",
        floor=m["idle_kib"],
        floor_name="a /ws/chat/ socket following nothing",
        target=TARGET_PAGE_KIB,
        database=db,
    )
    figure(
        "reattach",
        f"the turn's event buffer, JSON, {variant}",
        m["held_json_kib"],
        "KiB",
        database=db,
        note=f"{m['held_events']:.0f} events (bound {bounds['buffer']}), computed from those received",
    )


def run_variant(name: str, stack_: Stack, options: argparse.Namespace, database: str) -> str:
    """Both phases on ``stack_``, reported; what went wrong that is not a missed target, or ""."""
    session = asyncio.run(login(stack_.urls[0], PASSWORD))
    attach_on = on(session, stack_.urls[-1])
    where = "the turn's own process" if len(stack_.urls) == 1 else "a second process, via Redis"
    print(f"\n-- {name}: {database}, {len(stack_.urls)} daphne(s); pages attach on {where}")
    run = asyncio.run(
        reload_phase(
            session, attach_on, reloads=options.reloads, warmup=options.warmup, sse=options.sse
        )
    )
    report_reloads(run, name, where, database)
    memory = asyncio.run(memory_phase(session, attach_on, stack_.pids[-1], options.pages, stack_))
    report_memory(memory, options.pages, stack_, name, database)
    if memory["ended"] < options.pages:
        return (
            f"{name}: {options.pages - memory['ended']:.0f} of {options.pages} attached pages did "
            f"not see the turn end within {END_SECONDS:g} s of its cancel"
        )
    return ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reloads", type=int, default=15, help="WebSocket reloads measured")
    parser.add_argument("--warmup", type=int, default=2, help="reloads not counted, each kind")
    parser.add_argument("--sse", type=int, default=8, help="SSE re-attaches measured (0: none)")
    parser.add_argument("--pages", type=int, default=200, help="pages attached at once")
    parser.add_argument("--sqlite", action="store_true", help="no PostgreSQL: embedded only")
    parser.add_argument("--redis-url", default=os.environ.get("TALORYS_BENCH_REDIS_URL", REDIS_URL))
    parser.add_argument("--variant", choices=["both", "embedded", "redis"], default="both")
    options = parser.parse_args()
    failures = []
    try:
        if options.variant != "redis":
            with stack(sqlite=True, redis_url=None, daphnes=1) as embedded:
                failures.append(run_variant("embedded", embedded, options, "sqlite"))
        skip = (
            "" if options.variant == "embedded" else redis_skip(options.redis_url, options.sqlite)
        )
        if skip:
            print(f"\n-- redis: skipped ({skip})")
        elif options.variant != "embedded":
            with stack(sqlite=False, redis_url=options.redis_url, daphnes=2) as shared:
                failures.append(run_variant("redis", shared, options, "postgresql"))
    except (Garbled, RuntimeError) as error:
        failures.append(str(error))
    for failure in filter(None, failures):
        print(f"FAIL: {failure}")
    return 1 if any(failures) else 0


if __name__ == "__main__":
    sys.exit(main())
