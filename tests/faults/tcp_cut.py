"""A TCP relay on 127.0.0.1 that a test can cut and restore, to take a real server (PostgreSQL)
away from a live process and give it back, without touching the server itself.

``cut()`` closes the listening socket and every relayed connection: new connections are refused
and open ones are reset, as when the server goes down. ``restore()`` listens on the same port.
"""

from __future__ import annotations

import contextlib
import socket
import threading


class TcpCut:
    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.port = 0
        self._lock = threading.Lock()
        self._listener: socket.socket | None = None
        self._open: set[socket.socket] = set()

    def start(self) -> TcpCut:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        self.port = listener.getsockname()[1]
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()
        return self

    restore = start

    def cut(self) -> None:
        with self._lock:
            listener, self._listener = self._listener, None
            doomed, self._open = self._open, set()
        for sock in ([listener] if listener else []) + list(doomed):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    stop = cut

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return  # cut
            try:
                server = socket.create_connection(self.upstream, timeout=5)
            except OSError:
                client.close()
                continue
            server.settimeout(None)
            with self._lock:
                if self._listener is not listener:  # cut meanwhile
                    client.close()
                    server.close()
                    return
                self._open |= {client, server}
            for source, target in ((client, server), (server, client)):
                threading.Thread(target=self._pipe, args=(source, target), daemon=True).start()

    def _pipe(self, source: socket.socket, target: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                target.sendall(data)
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                target.shutdown(socket.SHUT_WR)
            with self._lock:
                self._open.discard(source)
            source.close()
