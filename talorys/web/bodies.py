"""Request body limits: a body over its route's limit is refused with 413 before it is read.

Three layers, because each server path reads bodies at a different point:

- daphne (the product's server, ``make run``): Twisted receives the whole body before the ASGI
  application is even called, and daphne then queues all of it in memory as ``http.request``
  messages. ``daphne_guard`` hooks daphne's request as its headers arrive: over the limit by
  Content-Length, or by a running count of a chunked body, it answers 413 and closes the
  connection, so the body is neither stored nor queued.
- ``AsgiBodyLimit`` wraps the Django ASGI app for any other ASGI server: it checks Content-Length
  and counts the ``http.request`` chunks before Django spools them, answering 413 early.
- ``BodyLimitMiddleware`` is the Django check for WSGI and the test client (Content-Length), and
  DATA_UPLOAD_MAX_MEMORY_SIZE backs it for chunked bodies there (a 413 in
  ApiErrorEnvelopeMiddleware).

The limit is TALORYS_MAX_BODY_BYTES; a route that needs more lists its path prefix in
settings.BODY_LIMITS (backup import will).

``daphne_guard`` is a safety limit, not a speed-up: without it one client can make daphne hold
gigabytes of body in memory, since daphne has no body limit of its own. It replaces three
methods of daphne's WebRequest and so relies on internals: Twisted's HTTPChannel calling
``gotLength(length)`` once the headers are in (with the request line's path in
``channel._path``), ``handleContentChunk(data)`` per piece of body and ``requestReceived(command,
path, version)`` at its end; daphne's HTTPFactory making its requests WebRequests, whose
``requestReceived`` hands the request to the application. A daphne or Twisted release that
renames, reorders or bypasses any of these breaks it silently: tests/api/test_body_limits.py
checks each of them in memory and fails naming both versions. No public setting does it: daphne
has no body limit among its options (cli.py: ports, timeouts, WebSocket sizes, proxy headers),
nor Twisted's Request; a test fails when the installed daphne or Twisted is not the one in
GUARD_CHECKED, to re-read the hooks.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from talorys.lib.errors import code_for_status, error_body
from talorys.web.openai_errors import is_openai_path, openai_error

TOO_LARGE_MESSAGE = "The request body is too large."
# The daphne and Twisted that daphne_guard was last read against.
GUARD_CHECKED = {"daphne": "4.2.3", "twisted": "26.10.0"}


def body_limit(path: str) -> int:
    """The most bytes of body a request to this path may send."""
    for prefix, limit in settings.BODY_LIMITS.items():
        if path.startswith(prefix):
            return limit
    return settings.MAX_BODY_BYTES


def _declared_length(value: bytes | str | None) -> int | None:
    """Content-Length as a number; -1 when it is there but not a number (refused as well)."""
    if value is None:
        return None
    text = value.decode("latin-1") if isinstance(value, bytes) else value
    return int(text) if text.strip().isdigit() else -1


def _too_large_body(path: str) -> tuple[bytes, bytes]:
    """(content type, body) of the 413: the envelope under /api/, OpenAI's shape under /v1/,
    plain text elsewhere."""
    if is_openai_path(path):
        return b"application/json", json.dumps(openai_error(413, TOO_LARGE_MESSAGE)).encode()
    if path.startswith("/api/"):
        return b"application/json", json.dumps(
            error_body(code_for_status(413), TOO_LARGE_MESSAGE)
        ).encode()
    return b"text/plain; charset=utf-8", TOO_LARGE_MESSAGE.encode()


class BodyLimitMiddleware:
    """Django: refuse by Content-Length before anything reads the body (WSGI, the test client)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        declared = _declared_length(request.META.get("CONTENT_LENGTH") or None)
        if declared is not None and (declared < 0 or declared > body_limit(request.path)):
            content_type, body = _too_large_body(request.path)
            return HttpResponse(body, status=413, content_type=content_type.decode())
        return self.get_response(request)


Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


class AsgiBodyLimit:
    """ASGI: refuse by Content-Length, or once the streamed chunks pass the limit, with a 413
    sent from here; the app then sees a disconnect and its own answer (if any) is dropped."""

    def __init__(self, app: Callable[..., Awaitable[None]]) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        limit = body_limit(path)
        headers = dict(scope.get("headers") or [])
        declared = _declared_length(headers.get(b"content-length"))
        if declared is not None and (declared < 0 or declared > limit):
            await self._refuse(send, path)
            return
        received = 0
        refused = False

        async def counting_receive() -> dict[str, Any]:
            nonlocal received, refused
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    refused = True
                    await self._refuse(send, path)
                    return {"type": "http.disconnect"}
            return message

        async def guarded_send(message: dict[str, Any]) -> None:
            if not refused:
                await send(message)

        await self.app(scope, counting_receive, guarded_send)

    @staticmethod
    async def _refuse(send: Send, path: str) -> None:
        content_type, body = _too_large_body(path)
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [
                    (b"content-type", content_type),
                    (b"content-length", str(len(body)).encode()),
                    (b"connection", b"close"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


def _daphne_refuse(request: Any) -> None:
    """Answer daphne's ``request`` (a WebRequest) with the 413 written straight to its
    transport, and close the connection: what the client still sends is dropped."""
    request._talorys_refused = True
    content_type, body = _too_large_body(request._talorys_path)
    transport = request.channel.transport
    transport.write(
        b"HTTP/1.1 413 Content Too Large\r\n"
        b"Content-Type: " + content_type + b"\r\n"
        b"Content-Length: " + str(len(body)).encode() + b"\r\n"
        b"Connection: close\r\n\r\n" + body
    )
    transport.loseConnection()


def daphne_guard() -> None:
    """Make daphne refuse an oversized body while it arrives (the module docstring says how).
    Idempotent; a no-op without daphne."""
    try:
        from daphne.http_protocol import WebRequest
    except ImportError:
        return
    if getattr(WebRequest, "_talorys_body_limit", False):
        return
    got_length = WebRequest.gotLength
    content_chunk = WebRequest.handleContentChunk
    request_received = WebRequest.requestReceived

    def guarded_got_length(self: Any, length: int | None) -> None:
        got_length(self, length)
        raw_path = getattr(self.channel, "_path", b"/") or b"/"
        self._talorys_path = raw_path.split(b"?", 1)[0].decode("latin-1")
        self._talorys_limit = body_limit(self._talorys_path)
        self._talorys_received = 0
        self._talorys_refused = False
        if length is not None and length > self._talorys_limit:
            _daphne_refuse(self)

    def guarded_content_chunk(self: Any, data: bytes) -> None:
        if getattr(self, "_talorys_refused", False):
            return  # answered already: what still arrives is dropped, not stored
        self._talorys_received = getattr(self, "_talorys_received", 0) + len(data)
        if self._talorys_received > getattr(self, "_talorys_limit", settings.MAX_BODY_BYTES):
            _daphne_refuse(self)
            return
        content_chunk(self, data)

    def guarded_request_received(self: Any, command: bytes, path: bytes, version: bytes) -> None:
        if getattr(self, "_talorys_refused", False):
            return  # never handed to the application
        request_received(self, command, path, version)

    WebRequest.gotLength = guarded_got_length
    WebRequest.handleContentChunk = guarded_content_chunk
    WebRequest.requestReceived = guarded_request_received
    WebRequest._talorys_body_limit = True
