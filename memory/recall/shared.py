"""One lazy pass at a time in a process, shared by the turns that need one at once.

Before its first token a turn brings the index up to date with what changed lately (the lazy
pass: memory.selectors.recall_pass). Under load fifty turns need it at once, and each one's pass
re-read the same changes and rewrote the same entries, one after the other under the index's row
lock: under benchmarks/load.py (API clients changing tasks all along) those passes were the web
process's largest cost before the first token. Here a turn that asks while a pass runs waits
for it to end, then takes the next pass itself, unless a pass that began after it asked has
ended meanwhile: that one saw every change committed before the turn asked, which is all a pass
of its own would have promised. A failed pass covers nobody: the next caller runs its own.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

R = TypeVar("R")


class SharedPass:
    def __init__(self) -> None:
        self._running = threading.Lock()  # held for a whole pass
        self._count = threading.Lock()  # held for a few instructions
        self._asked = 0  # callers so far, numbered
        self._covered = 0  # the callers that asked before the last good pass began

    def run(self, make_pass: Callable[[], R]) -> R | None:
        """``make_pass()``'s result, or None when another caller's pass, begun after this call,
        did the work."""
        with self._count:
            self._asked += 1
            mine = self._asked
        with self._running:
            if self._covered >= mine:
                return None
            with self._count:
                begun = self._asked
            result = make_pass()
            self._covered = begun
            return result
