"""A round-robin TCP proxy: several web processes behind one port, as a load balancer puts them.

Each connection a client opens goes to the next backend in turn (the first to backend 0, the
second to 1, ...), and stays there: an HTTP client that keeps its connection alive talks to one
process, and a new client lands on the next. ``routes`` records, per accepted connection, the
backend it went to and the local port of the proxy's connection to it, which is the client
address that backend's access log shows: a test can tell which process answered which request.

Bytes are copied as they come, by two threads per connection; a side that closes is passed on
as a half close, so a client that hangs up mid-stream is seen by the backend as it would be
without the proxy.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from dataclasses import dataclass


@dataclass(frozen=True)
class Route:
    backend: int
    upstream_port: int  # the proxy's side of its connection to the backend


class RoundRobinProxy:
    def __init__(self, backends: list[tuple[str, int]]) -> None:
        self.backends = backends
        self.routes: list[Route] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._sockets: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._closed = False
        self._thread = threading.Thread(target=self._accept, daemon=True, name="round-robin")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}"

    def start(self) -> RoundRobinProxy:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._closed = True
        # A close alone does not wake the accept() blocked in the thread (Linux), which then
        # held every test's teardown for the join's 5 s; a shutdown does.
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)
        self._listener.close()
        with self._lock:
            for sock in self._sockets:
                _close(sock)
        self._thread.join(timeout=5)

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:  # closed by stop()
                return
            with self._lock:
                backend = len(self.routes) % len(self.backends)
                try:
                    upstream = socket.create_connection(self.backends[backend], timeout=10)
                except OSError:
                    _close(client)
                    continue
                upstream.settimeout(None)
                self.routes.append(Route(backend, upstream.getsockname()[1]))
                self._sockets |= {client, upstream}
            pumps = [
                threading.Thread(target=_pump, args=(source, target), daemon=True)
                for source, target in ((client, upstream), (upstream, client))
            ]
            for pump in pumps:
                pump.start()
            threading.Thread(target=self._reap, args=(pumps, client, upstream), daemon=True).start()

    def _reap(self, pumps: list[threading.Thread], *sockets: socket.socket) -> None:
        for pump in pumps:
            pump.join()
        with self._lock:
            for sock in sockets:
                self._sockets.discard(sock)
                sock.close()


def _pump(source: socket.socket, target: socket.socket) -> None:
    try:
        while data := source.recv(65536):
            target.sendall(data)
        target.shutdown(socket.SHUT_WR)  # the other side said all it had to
    except OSError:  # reset, or closed by stop(): end both directions
        _close(source)
        _close(target)


def _close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()
