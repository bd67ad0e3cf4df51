"""Live daphnes forked from a parent that imported the app once (``python -m
tests.forked_daphne SOCKET``, one per xdist worker), where a daphne started the usual way spends
over a second of CPU importing Django, the app and their libraries; the suite starts one for
most browser and live-server tests (on a loaded 2-core machine a browser test's setup went from
4.8-6.2 s to 3.1-4.5 s). For each request on its Unix socket the parent forks a child that runs
daphne's CLI on the listening socket it was sent.

A child must not share the parent's event loop: daphne's app config installed Twisted's
reactor at Django's setup, so the child gets its own epoll instance, self-pipe and waker
(``_fresh_loop``); the parent holds no database connection when it forks, and Python reseeds
``random`` in a child by itself. The parent ignores SIGCHLD (the kernel reaps); the test watches
its daphne through a pidfd (``Forked``).

tests/conftest.py keeps a parent per environment a test module asks for (its Redis, its pool),
one set per worker; a forked daphne's data dir is its parent's, so a test whose server shares
the data dir with a process the test starts has its server started the usual way
(tests/conftest.py, OWN_DATA_DIR).
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import socket
import subprocess
import sys
import traceback
from pathlib import Path
from typing import Any

from tests.waiting import wait_for


class Forked:
    """A forked daphne as tests/conftest.py uses a ``subprocess.Popen``. It is the parent's
    child, not ours: its exit is read from a pidfd (Linux 5.3+), its status is not known."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self._exit = os.pidfd_open(pid)

    def poll(self) -> int | None:
        if self.returncode is None and select.select([self._exit], [], [], 0)[0]:
            self.returncode = 0
            os.close(self._exit)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int | None:
        if self.returncode is None:
            select.select([self._exit], [], [], timeout)
        return self.poll()

    def terminate(self, number: int = signal.SIGTERM) -> None:
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, number)

    def kill(self) -> None:
        self.terminate(signal.SIGKILL)


class Parent:
    def __init__(self, env: dict[str, str], folder: Path, root: Path) -> None:
        self.address, log = str(folder / "fork.sock"), folder / "parent.log"
        with log.open("w") as out:
            command = [sys.executable, "-m", "tests.forked_daphne", self.address]
            self.process = subprocess.Popen(command, cwd=root, env=env, stdout=out, stderr=out)
        wait_for(lambda: Path(self.address).exists(), "the parent", alive=self.process, log=log)

    def fork(self, listening: int, log: Path, access_log: Path) -> Forked:
        with socket.socket(socket.AF_UNIX) as conn:
            conn.connect(self.address)
            request = json.dumps({"log": str(log), "access_log": str(access_log)}).encode()
            socket.send_fds(conn, [request], [listening])
            return Forked(int(conn.recv(64)))

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait()


def _fresh_loop() -> None:
    """This child's own epoll instance, self-pipe and reactor waker for the loop Twisted's
    reactor runs on. Private attributes of asyncio (CPython 3.11) and Twisted: a change breaks
    every forked daphne at its start, loudly."""
    import selectors

    from daphne.server import twisted_loop as loop
    from twisted.internet import reactor

    loop: Any
    reactor: Any
    old_selector, old_pipe, old_waker = loop._selector, (loop._ssock, loop._csock), reactor.waker
    loop._selector = selectors.DefaultSelector()
    loop._make_self_pipe()
    reactor.removeReader(old_waker)  # gone from the new selector already: the books only
    reactor._internalReaders.discard(old_waker)
    old_waker.connectionLost(None)
    reactor.waker = None
    reactor.installWaker()
    old_selector.close()
    for end in old_pipe:
        end.close()


def _child(request: dict[str, str], listening: int) -> None:
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    out = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(out, 1)
    os.dup2(out, 2)
    _fresh_loop()
    from daphne.cli import CommandLineInterface

    sys.argv = ["daphne", "--fd", str(listening), "--access-log", request["access_log"]]
    sys.argv.append("config.asgi:application")
    CommandLineInterface.entrypoint()


def _warm() -> None:
    """What each child would do at its first request, done once here: the URLconf imported (the
    views, the API's routers: 0.23 s of a child's 0.3 s start, quiet) and the reverse map built.
    Nothing that depends on the test's data: the children read their database afresh."""
    from django.urls import get_resolver

    get_resolver().reverse_dict  # noqa: B018  (imports every view and builds the map)


def serve(address: str) -> None:
    from django.db import connections

    import config.asgi  # noqa: F401  (Django set up and the app imported, once)

    _warm()
    connections.close_all()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    server = socket.socket(socket.AF_UNIX)
    server.bind(address + ".tmp")
    server.listen()
    os.rename(address + ".tmp", address)  # ready: the test waits for this name
    while True:
        conn, _ = server.accept()
        with conn:
            message, fds, _, _ = socket.recv_fds(conn, 4096, 1)
            pid = os.fork()
            if pid == 0:
                try:
                    server.close()
                    conn.close()
                    _child(json.loads(message), fds[0])
                except Exception:
                    traceback.print_exc()
                finally:
                    sys.stdout.flush()
                    sys.stderr.flush()
                    os._exit(0)
            os.close(fds[0])
            conn.sendall(str(pid).encode())


if __name__ == "__main__":
    serve(sys.argv[1])
