"""Time to first text through Talorys versus a direct request to the same model server.

    .venv/bin/python benchmarks/turn_overhead.py [--runs 100] [--sqlite]

Sets up a throwaway database (PostgreSQL at 127.0.0.1:5432 when it answers, else SQLite in a
temporary directory) with 1,000 tasks, 1,000 notes, 2,000 memories and a 200-message
conversation, semantic recall off (turn_http.py measures it on), starts the fake OpenAI-compatible server from the test suite, then alternates
the two measurements so both see the same machine state:

- direct: one streamed chat-completions request with the OpenAI-compatible client, timed to
  its first text delta;
- Talorys: ``run_turn`` on the 200-message conversation (claim, owner message saved, reply
  allocated, settings, memory selection, history window, budget reservation, the same client),
  timed to its first ``text`` event.

Overhead is Talorys minus direct, per pair. Target: p50 <= 8 ms. The turns' own phases
(agent/runner/phases.py) are printed as a table. Then one more turn lists the SQL statements
sent before its first text: begin_turn's, then the stream's (at most 6 is the budget,
tests/agent/test_turn_statements.py), and 200 trips of one ORM read give what
each costs on this machine: the unit the overhead is made of.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._database import analyze, drop_database, start_django  # noqa: E402
from benchmarks._results import figure  # noqa: E402
from benchmarks._turn_phases import (  # noqa: E402
    StatementLog,
    phase_log,
    phase_table,
    statement_log,
)

TARGET_P50_MS = 8.0
QUESTION = "Can you remind me what I planned for the garden this weekend?"


def _seed(base_url: str) -> int:
    """Owner data and a 200-message conversation; returns the conversation id."""
    from agent.models import Conversation, Message
    from memory.models import Memory
    from talorys.owner.services.settings import owner_settings_update
    from talorys.workspace.models import Note, Task

    owner_settings_update(
        model_base_url=base_url,
        model_name="fake-model",
        time_zone="Europe/Paris",
        daily_ai_requests=100_000,
        # Keyword recall: this figure is the turn's own path (the items here have no vectors,
        # and the lazy pass would embed 16 of them a turn). turn_http.py measures both, with
        # every vector in place as a finished catch-up leaves them.
        semantic_enabled=False,
    )
    Task.objects.bulk_create(
        Task(title=f"Task {n}: water the garden beds" if n % 50 == 0 else f"Task {n}")
        for n in range(1000)
    )
    Note.objects.bulk_create(
        Note(title=f"Note {n}", content=f"Notes about project {n % 40}. " * 10) for n in range(1000)
    )
    Memory.objects.bulk_create(
        Memory(text=f"The owner's garden has {n} tulips" if n % 100 == 0 else f"Fact number {n}")
        for n in range(2000)
    )
    conversation = Conversation.objects.create(title="Long chat", summary="Earlier: planning.")
    Message.objects.bulk_create(
        Message(
            conversation=conversation,
            role="user" if n % 2 == 0 else "assistant",
            content=f"Message {n} about the weekend plans, the garden and a few errands to run.",
        )
        for n in range(200)
    )
    analyze()
    return conversation.pk


async def _direct_first_text(provider: object) -> float:
    from talorys.providers.base import ChatMessage, TextDelta

    began = time.perf_counter()
    first = None
    async for event in provider.stream(  # type: ignore[attr-defined]
        messages=[ChatMessage(role="user", content=QUESTION)], tools=[], max_tokens=256
    ):
        if first is None and isinstance(event, TextDelta) and event.text:
            first = time.perf_counter()
    assert first is not None
    return first - began


async def _talorys_first_text(conversation_id: int) -> float:
    from agent.runner import run_turn

    began = time.perf_counter()
    first = None
    async for event in run_turn(conversation_id=conversation_id, text=QUESTION):
        if first is None and event["type"] == "text":
            first = time.perf_counter()
        if event["type"] == "error":
            raise RuntimeError(event["message"])
    assert first is not None
    return first - began


async def _statements_before_first_text(conversation_id: int) -> StatementLog:
    """The SQL statements one turn sends before its first text, on every thread: begin_turn's
    (on the thread sync_to_async runs it on) and the trips'."""
    from asgiref.sync import sync_to_async
    from django.db import connections

    from agent.runner import begin_turn, stream_turn

    # Every thread's connection is made afresh, so hooked.
    await sync_to_async(connections.close_all)()
    connections.close_all()
    with statement_log() as log:
        start = await begin_turn(conversation_id=conversation_id, text=QUESTION)
        log.claimed = len(log.sent)
        async for event in stream_turn(start):
            if event["type"] == "text":
                log.stop()
    return log


def _one_read() -> object:
    from talorys.owner.models import OwnerSettings

    return OwnerSettings.objects.filter(pk=1).first()


def _warm_median(times: list[float]) -> float:
    """The median of ``times`` after their first fifth (the warm-up)."""
    return statistics.median(times[len(times) // 5 :])


async def _read_trip_ms(count: int = 200) -> float:
    """The median cost of one trip as the turn makes them (agent/runner/db.py: a thread, a pooled
    connection, one ORM read of the settings row): the unit the turn's overhead is made of."""
    from agent.runner.db import db

    times = []
    for _ in range(count):
        began = time.perf_counter()
        await db(_one_read)()
        times.append((time.perf_counter() - began) * 1000)
    return _warm_median(times)


def _on_one_connection(count: int = 200) -> tuple[float, float]:
    """Median ms of the same ORM read, and of a bare ``SELECT 1``, on one kept connection: what
    Django and the driver add to a query, against the round trip to PostgreSQL alone."""
    from django.db import connection

    def bare() -> None:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()

    medians = []
    for call in (_one_read, bare):
        times = []
        for _ in range(count):
            began = time.perf_counter()
            call()
            times.append((time.perf_counter() - began) * 1000)
        medians.append(_warm_median(times))
    connection.close()
    return medians[0], medians[1]


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


async def _measure(
    conversation_id: int, config: object, runs: int, warmup: int, engine: str
) -> None:

    from talorys.providers import provider_for

    # The direct client is made once and kept, as a program talking to a model server would.
    provider = provider_for(config)  # type: ignore[arg-type]
    direct: list[float] = []
    talorys: list[float] = []
    try:
        with phase_log() as phases:
            for number in range(warmup + runs):
                d = await _direct_first_text(provider)
                t = await _talorys_first_text(conversation_id)
                if number >= warmup:
                    direct.append(d * 1000)
                    talorys.append(t * 1000)
    finally:
        await provider.aclose()
    overhead = [t - d for t, d in zip(talorys, direct, strict=True)]
    p50, p95 = _percentile(overhead, 0.5), _percentile(overhead, 0.95)
    ratio = statistics.median(talorys) / statistics.median(direct)
    print(f"runs: {runs} (after {warmup} warm-up)")
    print(f"{'':10} {'p50 ms':>8} {'p95 ms':>8}")
    print(f"{'direct':10} {_percentile(direct, 0.5):8.2f} {_percentile(direct, 0.95):8.2f}")
    print(f"{'talorys':10} {_percentile(talorys, 0.5):8.2f} {_percentile(talorys, 0.95):8.2f}")
    print(f"{'overhead':10} {p50:8.2f} {p95:8.2f}")
    print(f"ratio (median talorys / median direct): {ratio:.2f}")
    phase_table("turn_overhead", phases.turns[warmup:], engine)
    await _statements_report(conversation_id, engine)
    verdict = "meets" if p50 <= TARGET_P50_MS else "MISSES"
    print(f"overhead p50 {p50:.2f} ms {verdict} the target of {TARGET_P50_MS:.0f} ms")
    floor = _percentile(direct, 0.5)
    figure(
        "turn_overhead",
        "in-process time-to-first-text overhead p50",
        p50,
        "ms",
        floor=floor,
        floor_name="direct request to the same fake model (its time to first text)",
        target=TARGET_P50_MS,
        database=engine,
    )
    figure(
        "turn_overhead", "in-process time-to-first-text overhead p95", p95, "ms", database=engine
    )


async def _statements_report(conversation_id: int, engine: str) -> None:
    """One more turn's statements before its first text, listed, and what a trip costs."""
    from asgiref.sync import sync_to_async

    statements = await _statements_before_first_text(conversation_id)
    queries = len(statements.sent) - statements.claimed  # the stream's (the budget's)
    trip = await _read_trip_ms()
    orm_read, bare_read = await sync_to_async(_on_one_connection, thread_sensitive=False)()
    print(
        f"SQL statements before the first text: begin_turn's {statements.claimed}, then the "
        f"stream's {queries} (budget 6)"
    )
    statements.print()
    print(
        f"after begin_turn, before its first text a turn sends {queries} SQL statements; one "
        f"read trip (a thread, a pooled connection, one ORM query) costs {trip:.2f} ms here: "
        f"{queries} x {trip:.2f} = {queries * trip:.1f} ms"
    )
    print(
        f"on one kept connection that ORM read takes {orm_read:.2f} ms, a bare SELECT 1 "
        f"{bare_read:.2f} ms: the rest of a trip is Django, the driver and the thread"
    )
    figure(
        "turn_overhead",
        "SQL statements before the first text",
        queries,
        "statements",
        target=6,
        database=engine,
        note=(
            f"after begin_turn's {statements.claimed}; one read trip (thread, pooled "
            f"connection, ORM query) {trip:.2f} ms here; on a kept connection the ORM read "
            f"{orm_read:.2f} ms, SELECT 1 {bare_read:.2f} ms"
        ),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--sqlite", action="store_true", help="use SQLite even if PostgreSQL is up")
    options = parser.parse_args()

    _database_url, pg_name = start_django(options.sqlite)
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per request otherwise
    logging.getLogger("agent").setLevel(logging.WARNING)  # and one per turn
    from django.core.management import call_command
    from django.db import connections

    from talorys.owner.selectors import owner_settings_get, provider_config
    from tests.agent.fake_openai import FakeOpenAI

    server = FakeOpenAI().start()
    try:
        call_command("migrate", verbosity=0)
        conversation_id = _seed(server.base_url)
        config = provider_config(owner_settings_get())
        engine = connections["default"].vendor
        print(f"database: {engine}; 1,000 tasks, 1,000 notes, 2,000 memories, 200 messages")
        connections.close_all()
        asyncio.run(_measure(conversation_id, config, options.runs, options.warmup, engine))
    finally:
        server.stop()
        connections.close_all()
        if pg_name:
            drop_database(pg_name)


if __name__ == "__main__":
    main()
