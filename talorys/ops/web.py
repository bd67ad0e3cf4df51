"""The web as N daphne processes behind one port, for talorys_run and talorys_web.

This process binds the listening socket itself and hands it to every daphne (``--fd``, kept open
in the child by ``pass_fds``): each one accepts from the same socket, so the kernel spreads the
connections across them, a daphne that dies leaves the others serving on the port, and the one
started again in its place takes the same socket (there is no moment when the port is free for
something else to take). The supervisor (supervisor.py) restarts them like any other child.

Several processes need Redis (REDIS_URL): without it the channel layer, the cache (login
throttling, rate limits) and the live-turn mirror (agent/live/mirror.py) live in each process's
memory, so a page's socket on one process would never hear a turn or a notification sent from
another, and each process would count logins apart. So TALORYS_WEB_PROCESSES defaults to the
CPU count with Redis and to one without, and more than one without Redis is refused at start.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from django.core.management.base import CommandError

from talorys.lib.env import env_int
from talorys.ops.supervisor import Supervisor

ASGI_APPLICATION = "config.asgi:application"
SETTING = "TALORYS_WEB_PROCESSES"


class WebStartError(CommandError):
    """The web cannot start as asked (TALORYS_WEB_PROCESSES, the port): the message says why.
    A CommandError, so talorys_run and talorys_web print it and exit 1, with no traceback."""


def web_process_count(redis_url: str) -> int:
    """How many daphnes to run (the module's docstring says why), or WebStartError for a count
    that is not a whole number of at least 1, or more than one without Redis."""
    default = max(1, os.cpu_count() or 1) if redis_url else 1
    try:
        count = env_int("TALORYS_WEB_PROCESSES", default)
    except ValueError as exc:
        raise WebStartError(str(exc)) from exc
    if count < 1:
        raise WebStartError(f"{SETTING} must be 1 or more, got {count}")
    if count > 1 and not redis_url:
        raise WebStartError(
            f"{SETTING}={count} needs Redis (REDIS_URL): without it the channel layer, the cache "
            "and the live-turn mirror live in each process's memory, so a page served by one "
            "process would miss what another sends. Set REDIS_URL, or leave "
            f"{SETTING} unset (one process)."
        )
    return count


@dataclass
class WebProcesses:
    """The listening socket and the daphne command lines that share it."""

    listening: socket.socket
    commands: dict[str, list[str]]

    @property
    def pass_fds(self) -> dict[str, tuple[int, ...]]:
        return {name: (self.listening.fileno(),) for name in self.commands}

    def close(self) -> None:
        self.listening.close()


def web_processes(host: str, port: int, count: int) -> WebProcesses:
    """Bind ``host``:``port`` here and make ``count`` daphne commands that serve it: named
    "web" when there is one (as before), else "web-1" … "web-N"."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        listening = socket.create_server((host, port), family=family, backlog=1024)
    except OSError as exc:
        raise WebStartError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
    listening.set_inheritable(True)
    daphne = str(Path(sys.executable).with_name("daphne"))
    command = [daphne, "--fd", str(listening.fileno()), ASGI_APPLICATION]
    names = ["web"] if count == 1 else [f"web-{n}" for n in range(1, count + 1)]
    return WebProcesses(listening, {name: list(command) for name in names})


def shown_host(host: str) -> str:
    """The address to print and to check: a wildcard bind answers on the loopback too."""
    return "127.0.0.1" if host in ("0.0.0.0", "::", "") else host


def wait_until_listening(
    host: str,
    port: int,
    supervisor: Supervisor,
    stopping: Callable[[], bool],
    timeout: float = 30,
) -> None:
    """Return once a request to the port gets an HTTP answer (the socket accepts connections as
    soon as it is bound, before any daphne runs), or after ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not stopping():
        try:
            with socket.create_connection((host, port), timeout=2) as connection:
                connection.sendall(b"GET /api/health HTTP/1.0\r\nHost: localhost\r\n\r\n")
                if connection.recv(5) == b"HTTP/":
                    return
        except OSError:
            pass
        supervisor.tick()
        time.sleep(0.2)


class StopFlag:
    """Set by Ctrl-C or SIGTERM: the supervising loop ends and the children are stopped."""

    def __init__(self) -> None:
        self.set = False
        signal.signal(signal.SIGINT, self._stop)
        signal.signal(signal.SIGTERM, self._stop)

    def _stop(self, *_) -> None:
        self.set = True

    def __call__(self) -> bool:
        return self.set


@contextmanager
def web_serving(
    host: str,
    port: int,
    count: int,
    *,
    others: dict[str, list[str]],
    data_dir: Path,
    quiet_web: bool = False,
    env: Mapping[str, str] | None = None,
) -> Iterator[tuple[Supervisor, WebProcesses]]:
    """``count`` daphnes serving ``host``:``port`` (0: a free port, read it from the socket),
    and ``others`` beside them (quiet: their logs go to stderr), started here and stopped when
    the block ends. ``quiet_web``: the daphnes' access logs (stdout) go nowhere either."""
    web = web_processes(host, port, count)
    try:
        quiet = set(others) | (set(web.commands) if quiet_web else set())
        supervisor = Supervisor(
            web.commands | others,
            data_dir=data_dir,
            quiet=quiet,
            pass_fds=web.pass_fds,
            env=env,
        )
        supervisor.start()
        try:
            yield supervisor, web
        finally:
            supervisor.stop()
    finally:
        web.close()


def run_supervised(
    host: str,
    port: int,
    count: int,
    *,
    others: dict[str, list[str]],
    data_dir: Path,
    ready: Callable[[Supervisor, StopFlag], None],
) -> None:
    """Serve ``host``:``port`` with ``count`` daphnes and run ``others`` beside them, all
    restarted when they die, until Ctrl-C or SIGTERM. ``ready`` is called once the port answers
    (for the URL to be the last line on screen)."""
    stopping = StopFlag()
    with web_serving(host, port, count, others=others, data_dir=data_dir) as (supervisor, _):
        wait_until_listening(shown_host(host), port, supervisor, stopping)
        if not stopping():
            ready(supervisor, stopping)
        # A child that dies is started again: the web keeps serving while it comes back.
        while not stopping():
            supervisor.tick()
            time.sleep(0.5)
