"""talorys_run's and talorys_web's process manager: the web processes, the worker and beat run as
its children, and a child that dies is started again; only Ctrl-C or SIGTERM stops them all.

A child that exits while Talorys is not stopping is logged and started again after a pause that
begins at RESTART_FIRST (1 s) and doubles up to RESTART_MAX (30 s); one that had stayed up for
STABLE_AFTER (60 s) before it died starts from RESTART_FIRST again. So a worker that dies once is
back within a second, one that dies at every start is tried every 30 s instead of in a busy loop,
and the web never stops because the worker did. Each death and start is logged, and the state of
every child is kept in the data dir's processes.json, which /api/health shows the owner
(``processes_read``, talorys/ops/health.py).
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

log = logging.getLogger(__name__)

RESTART_FIRST = 1.0  # seconds before the first restart
RESTART_MAX = 30.0
STABLE_AFTER = 60.0  # up this long: its next death is a first one again
STATE_FILE = "processes.json"


class ExitRecord(TypedDict):
    code: int  # negative: killed by that signal
    at: str  # ISO 8601, UTC


class ProcessState(TypedDict):
    status: str  # running | restarting (dead, waiting for its restart)
    pid: int | None
    started_at: str | None
    restarts: int
    last_exit: ExitRecord | None


@dataclass
class Child:
    name: str
    command: list[str]
    quiet: bool  # its stdout (start-up banners) goes nowhere; its logs go to stderr anyway
    pass_fds: tuple[int, ...] = ()  # kept open in it: the web's listening socket (web.py)
    process: subprocess.Popen | None = None
    started: float = 0.0  # monotonic
    started_at: str | None = None
    restarts: int = 0
    backoff: float = RESTART_FIRST
    restart_at: float | None = None  # monotonic; set while it is dead
    last_exit: ExitRecord | None = None

    def state(self) -> ProcessState:
        return ProcessState(
            status="running" if self.process is not None else "restarting",
            pid=self.process.pid if self.process is not None else None,
            started_at=self.started_at,
            restarts=self.restarts,
            last_exit=self.last_exit,
        )


class Supervisor:
    """Starts the children, restarts the ones that die (``tick``), stops them all (``stop``)."""

    def __init__(
        self,
        commands: dict[str, list[str]],
        *,
        data_dir: Path,
        quiet: set[str],
        pass_fds: Mapping[str, tuple[int, ...]] | None = None,
        env: Mapping[str, str] | None = None,
    ):
        """``pass_fds``: the descriptors each child keeps open (by name); ``env``: the
        children's environment (None: this process's)."""
        fds = pass_fds or {}
        self.env = env
        self.children = {
            name: Child(name, command, name in quiet, fds.get(name, ()))
            for name, command in commands.items()
        }
        self.state_path = data_dir / STATE_FILE

    def start(self) -> None:
        now = time.monotonic()
        for child in self.children.values():
            self._spawn(child, now)
        self._save()

    def process(self, name: str) -> subprocess.Popen | None:
        return self.children[name].process

    def tick(self, now: float | None = None) -> None:
        """Notice the children that died and start the ones whose pause is over."""
        now = time.monotonic() if now is None else now
        changed = False
        for child in self.children.values():
            if child.process is not None and child.process.poll() is not None:
                self._died(child, now)
                changed = True
            elif child.restart_at is not None and now >= child.restart_at:
                child.restarts += 1
                pid = self._spawn(child, now)
                log.warning("%s restarted (pid %d, restart %d)", child.name, pid, child.restarts)
                changed = True
        if changed:
            self._save()

    def stop(self, timeout: float = 10) -> None:
        """SIGTERM to every child, SIGKILL to the ones still there after ``timeout``."""
        running = [c.process for c in self.children.values() if c.process is not None]
        for process in running:
            if process.poll() is None:
                process.terminate()
        deadline = time.monotonic() + timeout
        for process in running:
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self.state_path.unlink(missing_ok=True)

    def _spawn(self, child: Child, now: float) -> int:
        stdout = subprocess.DEVNULL if child.quiet else None
        child.process = subprocess.Popen(
            child.command, stdout=stdout, pass_fds=child.pass_fds, env=self.env
        )
        child.started, child.started_at, child.restart_at = now, _utc_now(), None
        return child.process.pid

    def _died(self, child: Child, now: float) -> None:
        assert child.process is not None
        code = child.process.returncode
        if now - child.started >= STABLE_AFTER:
            child.backoff = RESTART_FIRST
        child.process, child.restart_at = None, now + child.backoff
        child.last_exit = ExitRecord(code=code, at=_utc_now())
        log.warning(
            "%s exited with %s; restarting it in %.0f s",
            child.name,
            _exit_words(code),
            child.backoff,
        )
        child.backoff = min(child.backoff * 2, RESTART_MAX)

    def _save(self) -> None:
        """Write the children's state for /api/health, atomically (the web reads it any time)."""
        state = {
            "supervisor_pid": os.getpid(),
            "processes": {name: child.state() for name, child in self.children.items()},
        }
        fd, temp = tempfile.mkstemp(prefix=".processes", dir=self.state_path.parent)
        with os.fdopen(fd, "w") as file:
            json.dump(state, file)
        os.replace(temp, self.state_path)


def processes_read(data_dir: Path) -> dict[str, ProcessState] | None:
    """The children's state as talorys_run last wrote it; None when talorys_run is not what
    runs this installation (no file, or its process is gone)."""
    try:
        state = json.loads((data_dir / STATE_FILE).read_text())
        pid = int(state["supervisor_pid"])
        processes: dict[str, ProcessState] = state["processes"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:  # alive, another user's
        pass
    return processes


def _exit_words(code: int) -> str:
    try:
        return f"{code} (killed by {signal.Signals(-code).name})" if code < 0 else str(code)
    except ValueError:
        return str(code)


def _utc_now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
