"""Live daphnes forked from a process that has imported the app once.

A daphne started the usual way spends over a second of CPU importing Django, the app and their
libraries before it answers, and the suite starts one for most browser and live-server tests.
A forked one skips all of it (on a loaded 2-core machine a browser test's setup went from
4.8-6.2 s to 3.1-4.5 s). One such parent (``python -m tests.forked_daphne
SOCKET``) runs per xdist worker and per environment of the live server: it imports
``config.asgi`` (Django set up, as daphne's CLI would do it) and then, for each request on its
Unix socket, forks a child that runs daphne's CLI on the listening socket it was sent.

What a fork must not share with its siblings is made fresh in the child: the asyncio loop's
epoll instance and self-pipe (made when daphne's app config installed Twisted's reactor, at
Django's setup), the database connections (closed before any fork), and the random state
(Python reseeds ``random`` in a child by itself). The parent reaps its children
(SIGCHLD ignored); the test watches its daphne through a pidfd (``Forked``).

tests/conftest.py uses it for a live server with the default environment only: the data dir
is then the parent's, one per worker, where the usual start gives each test its own (no test
of a default live server reads the server's data dir).
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
from pathlib import Path
from typing import Any

from tests.waiting import wait_for


class Forked:
    """A forked daphne as ``subprocess.Popen`` is used here: poll, terminate, kill, wait. It is
    the parent's child, not ours, so its exit is read from a pidfd (Linux 5.3+)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self._exit = os.pidfd_open(pid)

    def poll(self) -> int | None:
        if self.returncode is None and select.select([self._exit], [], [], 0)[0]:
            self.returncode = 0  # its status went to the parent that reaped it
            os.close(self._exit)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int | None:
        if self.returncode is None:
            select.select([self._exit], [], [], timeout)
        return self.poll()

    def _signal(self, number: int) -> None:
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, number)

    def terminate(self) -> None:
        self._signal(signal.SIGTERM)

    def kill(self) -> None:
        self._signal(signal.SIGKILL)


class Parent:
    """The forking parent for one environment, started on first use."""

    def __init__(self, env: dict[str, str], folder: Path, root: Path) -> None:
        self.address = str(folder / "fork.sock")
        self.log = folder / "parent.log"
        with self.log.open("w") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "tests.forked_daphne", self.address],
                cwd=root,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        wait_for(
            lambda: Path(self.address).exists(),
            "the daphne parent to import the app",
            alive=self.process,  # type: ignore[arg-type]
            log=self.log,
        )

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
    """Give this child its own epoll instance, loop self-pipe and reactor waker for the loop
    Twisted's reactor runs on: the fork shares the parent's, and so its siblings'. Private
    attributes of asyncio (CPython 3.11) and Twisted; a change breaks every forked daphne at
    its start, loudly."""
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


def serve(address: str) -> None:
    from django.db import connections

    import config.asgi  # noqa: F401  (Django set up and the app imported, once)

    connections.close_all()
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps the children
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
                server.close()
                conn.close()
                code = 0
                try:
                    _child(json.loads(message), fds[0])
                except SystemExit as exit:
                    code = exit.code if isinstance(exit.code, int) else 1
                except BaseException:
                    import traceback

                    traceback.print_exc()
                    code = 1
                finally:
                    sys.stdout.flush()
                    sys.stderr.flush()
                    os._exit(code)
            os.close(fds[0])
            conn.sendall(str(pid).encode())


if __name__ == "__main__":
    serve(sys.argv[1])
