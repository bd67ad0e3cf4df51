"""What the turn benchmarks share about a turn's own figures: its phases before the first text,
read from its "Turn ended" log line (agent/runner/phases.py), and the SQL it sends before that
text, on every thread, begin_turn's included."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from benchmarks._results import figure


class PhaseLog(logging.Handler):
    """Keeps the ``phases_ms`` of every "Turn ended" line of agent.runner.chat."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.turns: list[dict[str, float]] = []

    def emit(self, record: logging.LogRecord) -> None:
        phases = getattr(record, "phases_ms", None)
        if isinstance(phases, dict):
            self.turns.append(phases)


@contextmanager
def phase_log() -> Iterator[PhaseLog]:
    """Collect the turns' phases while inside; the chat logger's lines go nowhere else."""
    handler = PhaseLog()
    logger = logging.getLogger("agent.runner.chat")
    level, propagate = logger.level, logger.propagate
    logger.setLevel(logging.INFO)
    logger.propagate = False
    logger.addHandler(handler)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
        logger.propagate = propagate


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def phase_table(benchmark: str, turns: list[dict[str, float]], database: str) -> None:
    """Print phase, p50 ms, p95 ms over ``turns`` and record each as a figure."""
    from agent.runner.phases import PHASES  # after django.setup(), which the caller made

    names = [n for n in PHASES if any(n in t for t in turns)]
    names += sorted({n for t in turns for n in t} - set(names))
    print(f"phases of {len(turns)} turns (overlapping: gate+recall run beside conversation)")
    print(f"{'phase':16} {'p50 ms':>8} {'p95 ms':>8}")
    for name in names:
        values = [t.get(name, 0.0) for t in turns]
        p50, p95 = _percentile(values, 0.5), _percentile(values, 0.95)
        print(f"{name:16} {p50:8.2f} {p95:8.2f}")
        figure(benchmark, f"turn phase {name} p50", p50, "ms", database=database)
        figure(benchmark, f"turn phase {name} p95", p95, "ms", database=database)


class StatementLog:
    """The SQL statements sent on any connection made while ``hooked``, until ``stop``."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str]] = []
        self.stopped = False
        self.claimed = 0  # how many of ``sent`` begin_turn's are (set by the caller)

    def __call__(self, execute, sql, params, many, context):  # type: ignore[no-untyped-def]
        if not self.stopped:
            self.sent.append((threading.current_thread().name, sql))
        return execute(sql, params, many, context)

    def stop(self) -> None:
        self.stopped = True

    def print(self, width: int = 150) -> None:
        for number, (thread, sql) in enumerate(self.sent, 1):
            print(f"{number:3} {thread[:14]:14} {sql[:width]}")


@contextmanager
def statement_log() -> Iterator[StatementLog]:
    """Count what connections made inside send (close every thread's first, so that each trip
    makes its connection afresh, hooked)."""
    from django.db.backends.signals import connection_created

    log = StatementLog()

    def hook(sender: Any, connection: Any, **kwargs: Any) -> None:
        if log not in connection.execute_wrappers:
            connection.execute_wrappers.append(log)

    connection_created.connect(hook)
    try:
        yield log
    finally:
        connection_created.disconnect(hook)
