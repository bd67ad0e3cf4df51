"""Where a chat turn's time goes before its first text, phase by phase.

Each phase is a ``time.perf_counter`` difference added to a dict: a few microseconds a turn, no
logging of its own. The turn's "Turn ended" line carries them in its ``extra`` (``phases_ms``),
which is where benchmarks/turn_overhead.py reads them from.

The phases, in the order a turn passes them (some overlap: the reads run in two trips at once):

- ``claim``: begin_turn (the lease, the owner's message, the reply allocated);
- ``gate``: the first model step's gate trip (the lease, the settings, the budget reservation,
  recall's lazy pass);
- ``recall``: the memories and the related items, after the gate (two trips at once);
- ``conversation``: the summary, the history and the outcome notes (beside the two above);
- ``reads``: all of the above but the claim, as the turn waited for them;
- ``window``: the history window and the outcome notes' rounds (the system prompt measured);
- ``prompt``: the system prompt and the opening messages built;
- ``tools``: the tool schemas offered to the first step;
- ``first_text_wait``: from the first request's start (its JSON, the HTTP request) to its first
  text delta, the model's own time to first text included;
- ``first_text``: from the claim's start to the first text, everything.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Awaitable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

# Every phase's name, in the order above (the benchmarks' tables and the tests read it).
PHASES = (
    "claim",
    "gate",
    "recall",
    "conversation",
    "reads",
    "window",
    "prompt",
    "tools",
    "first_text_wait",
    "first_text",
)

T = TypeVar("T")


class Phases:
    """Milliseconds per phase of one turn, and when the turn began (``began``)."""

    def __init__(self, began: float | None = None) -> None:
        self.began = time.perf_counter() if began is None else began
        self.ms: dict[str, float] = {}
        self.first_text_seen = False
        # When the first model request started (model_loop), for ``first_text_wait``.
        self.request_began: float | None = None

    def add(self, name: str, since: float) -> None:
        """Add the time from ``since`` (a perf_counter reading) to now to phase ``name``."""
        self.ms[name] = self.ms.get(name, 0.0) + (time.perf_counter() - since) * 1000

    @contextmanager
    def timed(self, name: str) -> Iterator[None]:
        since = time.perf_counter()
        try:
            yield
        finally:
            self.add(name, since)

    async def waited(self, name: str, awaitable: Awaitable[T]) -> T:
        """``await awaitable``, timed as phase ``name``."""
        with self.timed(name):
            return await awaitable

    def first_text(self) -> None:
        """The turn's first text is out: ``first_text`` is the whole time to it (once), and
        ``first_text_wait`` the time since the first request started."""
        if not self.first_text_seen:
            self.first_text_seen = True
            if self.request_began is not None:
                self.add("first_text_wait", self.request_began)
            self.add("first_text", self.began)

    def rounded(self) -> dict[str, float]:
        return {name: round(ms, 2) for name, ms in self.ms.items()}


# begin_turn's timing, for the stream that follows it: a TurnStart is made once per turn and
# the entry goes with it (a stream never started leaves nothing behind).
_claims: weakref.WeakKeyDictionary[Any, Phases] = weakref.WeakKeyDictionary()


def claimed(start: object, began: float) -> None:
    """``start`` was claimed by a begin_turn that began at ``began`` (perf_counter)."""
    phases = Phases(began)
    phases.add("claim", began)
    _claims[start] = phases


def turn_phases(start: object) -> Phases:
    """The phases of the turn ``start`` began, its claim included when begin_turn timed it."""
    return _claims.pop(start, None) or Phases()
