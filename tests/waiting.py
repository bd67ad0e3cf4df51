"""Waiting on an event in a test: what is sure to come (a server up, a worker's result, a lock
taken) is waited for, not timed. The limit only tells a hang from a slow machine, so it is far
beyond what any step takes on a loaded two-core machine (load average 10, `make test` beside two
CPU-bound processes). A test never fails because the machine is slow; pytest-timeout's per-test
limit (pyproject.toml) is the last resort for hangs."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from pathlib import Path

HANG_SECONDS = 120.0


def wait_for(
    condition: Callable[[], object],
    what: str,
    *,
    seconds: float = HANG_SECONDS,
    interval: float = 0.1,
    alive: subprocess.Popen | None = None,
    log: Path | None = None,
) -> None:
    """Until ``condition()`` is true. Fails after ``seconds`` ("timed out waiting for <what>"),
    or as soon as ``alive``, a process the event depends on, has exited (with ``log``'s tail)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if alive is not None and alive.poll() is not None:
            tail = log.read_text()[-3000:] if log and log.exists() else ""
            raise AssertionError(f"exited ({alive.returncode}) before {what}:\n{tail}")
        if time.monotonic() > deadline:
            tail = log.read_text()[-3000:] if log and log.exists() else ""
            raise AssertionError(f"timed out waiting for {what}:\n{tail}")
        time.sleep(interval)
