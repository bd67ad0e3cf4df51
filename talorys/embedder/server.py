"""The embedder process's HTTP server: the OpenAI embeddings protocol, on a Unix socket or TCP.

``POST /v1/embeddings`` with ``{"model": ..., "input": [texts]}`` answers ``{"data":
[{"embedding": [...], "index": i}], "model": ...}``, as any OpenAI-compatible server does, so
the web processes and the worker use the one client they use for a configured server
(talorys/providers/openai_embeddings.py, memory/embeddings.py). ``GET /health`` says it is up.

The standard library's server (one thread per connection, HTTP/1.1 keep-alive): a few clients
on one machine need no framework. The threads only parse and wait; the model runs on the queue's
one thread (queue.py), which serves queries before the next chunk of a bulk request.
No authentication: it listens on the data dir's socket (mode 0600, the install's user only) or,
in compose, on the internal network, never on a published port.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import socketserver
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from talorys.embedder.queue import EmbedQueue

log = logging.getLogger(__name__)

MAX_BODY = 8 * 1024 * 1024
MAX_INPUTS = 2048


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Serving  # type: ignore[assignment]  # (socketserver's is BaseServer)

    def do_GET(self) -> None:
        if self.path != "/health":
            return self._send(404, {"error": {"message": "Not found"}})
        queue = self.server.queue
        self._send(
            200, {"status": "ok", "model": self.server.model_name, "waiting": queue.waiting()}
        )

    def do_POST(self) -> None:
        if self.path.rstrip("/") not in ("/v1/embeddings", "/embeddings"):
            return self._send(404, {"error": {"message": "Not found"}})
        texts = self._texts()
        if isinstance(texts, str):
            return self._send(400, {"error": {"message": texts}})
        try:
            vectors = self.server.queue.embed(texts)
        except Exception as error:
            log.exception("Embedding failed")
            return self._send(500, {"error": {"message": f"Embedding failed: {error}"}})
        data = [
            {"object": "embedding", "index": i, "embedding": row.tolist()}
            for i, row in enumerate(vectors)
        ]
        usage = {"prompt_tokens": 0, "total_tokens": 0}
        self._send(
            200, {"object": "list", "data": data, "model": self.server.model_name, "usage": usage}
        )

    def _texts(self) -> list[str] | str:
        """The request's input as a list of strings, or what is wrong with it."""
        length = int(self.headers.get("Content-Length") or 0)
        if not 0 < length <= MAX_BODY:
            return f"A JSON body of 1 to {MAX_BODY} bytes."
        try:
            body = json.loads(self.rfile.read(length))
        except ValueError:
            return "The body is not JSON."
        texts = body.get("input") if isinstance(body, dict) else None
        texts = [texts] if isinstance(texts, str) else texts
        if not (
            isinstance(texts, list)
            and len(texts) <= MAX_INPUTS
            and all(isinstance(t, str) for t in texts)
        ):
            return f"'input': up to {MAX_INPUTS} strings."
        return texts

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def address_string(self) -> str:
        # A Unix socket's peer has no address (http.server would index an empty string).
        return str(self.client_address[0]) if self.client_address else "local"

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s %s", self.address_string(), format % args)


class _Serving:
    """What the handler reads from its server."""

    queue: EmbedQueue
    model_name: str


class _UnixServer(_Serving, socketserver.ThreadingUnixStreamServer):
    daemon_threads = True

    def server_bind(self) -> None:
        super().server_bind()
        os.chmod(str(self.server_address), 0o600)


class _TcpServer(_Serving, ThreadingHTTPServer):
    daemon_threads = True


def answers(path: Path) -> bool:
    """Something listens on the socket at ``path`` (another embedder of this install)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        try:
            probe.connect(str(path))
        except OSError:
            return False
    return True


def make_server(
    queue: EmbedQueue, *, model_name: str, socket_path: Path | None, listen: str = ""
) -> socketserver.BaseServer:
    """A server bound to the Unix socket at ``socket_path``, or else to ``listen``
    (``host:port``); not yet serving. A socket file left by a process that died is replaced;
    one that answers is refused."""
    server: _UnixServer | _TcpServer
    if socket_path is not None:
        if answers(socket_path):
            raise RuntimeError(f"Another embedder already serves {socket_path}.")
        socket_path.unlink(missing_ok=True)
        server = _UnixServer(str(socket_path), _Handler)
    else:
        parts = urlsplit(listen if "//" in listen else f"//{listen}")
        server = _TcpServer((parts.hostname or "127.0.0.1", parts.port or 8001), _Handler)
    server.queue, server.model_name = queue, model_name
    return server
