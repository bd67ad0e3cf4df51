"""Request bodies over the limit are refused with 413 (the envelope under /api/) before they are
read: by a real daphne (Content-Length, and a chunked body counted as it arrives), by the ASGI
wrapper around Django, and by Django itself (WSGI and the test client). The daphne guard hooks
daphne's and Twisted's internals, so two tests check, in memory, that what it hooks is still
there and still called as it expects: they fail naming the versions when an upgrade moves it."""

from __future__ import annotations

import asyncio
import inspect
import json
import select
import socket
from importlib.metadata import version as package_version
from urllib.parse import urlsplit

import pytest
from daphne.http_protocol import HTTPFactory, WebRequest
from django.core.asgi import get_asgi_application
from django.test import Client, override_settings
from twisted.internet.address import IPv4Address
from twisted.internet.defer import Deferred
from twisted.internet.error import ConnectionDone
from twisted.internet.testing import StringTransport
from twisted.python.failure import Failure
from twisted.web.http import Request as TwistedRequest

from talorys.web.bodies import GUARD_CHECKED, AsgiBodyLimit, daphne_guard
from talorys.web.websocket import CLOSE_FRAMES_CHECKED
from talorys.workspace.models import Task

MIB = 2**20


def _connect(live_server_url: str) -> socket.socket:
    url = urlsplit(live_server_url)
    sock = socket.create_connection((url.hostname, url.port))
    sock.settimeout(10)
    return sock


def _read_response(sock: socket.socket) -> tuple[int, dict]:
    data = b""
    while b"\r\n\r\n" not in data:
        piece = sock.recv(65536)
        if not piece:
            break
        data += piece
    head, _, body = data.partition(b"\r\n\r\n")
    headers = dict(
        line.split(": ", 1) for line in head.decode("latin-1").split("\r\n")[1:] if ": " in line
    )
    length = int(headers.get("Content-Length", len(body)))
    while len(body) < length:
        piece = sock.recv(65536)
        if not piece:
            break
        body += piece
    return int(head.split(b" ", 2)[1]), json.loads(body) if body else {}


def test_daphne_refuses_a_declared_huge_body_before_it_is_sent(live_server_url):
    sock = _connect(live_server_url)
    sock.sendall(
        b"POST /api/auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Content-Type: application/json\r\nContent-Length: 1000000000\r\n\r\n"
    )
    # Not a byte of the body was sent: the answer comes from the headers alone.
    status, body = _read_response(sock)
    sock.close()
    assert status == 413
    assert body["error"]["code"] == "TOO_LARGE"


def test_daphne_stops_a_chunked_body_once_it_passes_the_limit(live_server_url, settings):
    sock = _connect(live_server_url)
    sock.sendall(
        b"POST /api/tasks HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    chunk = b"x" * 65536
    total = 64 * MIB
    sent = 0
    try:
        while sent < total:
            sock.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            sent += len(chunk)
            readable, _, _ = select.select([sock], [], [], 0)
            if readable:
                break
    except (BrokenPipeError, ConnectionResetError):
        pass  # the server answered and closed while this side was still sending
    status, body = _read_response(sock)
    sock.close()
    assert status == 413
    assert body["error"]["code"] == "TOO_LARGE"
    # Cut off soon after the limit (what the socket buffers hold), far from all 64 MiB.
    assert sent < settings.MAX_BODY_BYTES + 8 * MIB


def test_daphne_still_takes_a_body_within_the_limit(live_server_url):
    sock = _connect(live_server_url)
    body = json.dumps({"username": "owner", "password": "x" * 900}).encode()
    sock.sendall(
        b"POST /api/auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Content-Length: " + str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n" + body
    )
    status, answer = _read_response(sock)
    sock.close()
    assert status == 401 and answer["error"]["code"] == "UNAUTHORIZED"


# --- the ASGI wrapper, around the real Django ASGI application ---------------------------------


def _run_asgi(headers: list[tuple[bytes, bytes]], chunks: int, chunk_size: int = MIB):
    app = AsgiBodyLimit(get_asgi_application())
    pulled = 0
    sent: list[dict] = []

    async def receive() -> dict:
        nonlocal pulled
        if pulled >= chunks:
            await asyncio.sleep(3600)  # the client waits for the answer
        pulled += 1
        return {"type": "http.request", "body": b"x" * chunk_size, "more_body": pulled < chunks}

    async def send(message: dict) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/api/tasks",
        "raw_path": b"/api/tasks",
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"testserver"), (b"content-type", b"application/json"), *headers],
        "client": ("127.0.0.1", 5000),
        "server": ("testserver", 80),
    }
    asyncio.run(asyncio.wait_for(app(scope, receive, send), 10))
    return pulled, sent


def test_the_asgi_wrapper_refuses_by_content_length_without_reading(settings):
    pulled, sent = _run_asgi([(b"content-length", str(64 * MIB).encode())], chunks=64)
    assert pulled == 0
    assert sent[0]["status"] == 413
    assert json.loads(sent[1]["body"])["error"]["code"] == "TOO_LARGE"


def test_the_asgi_wrapper_counts_a_streamed_body_and_stops_early(settings):
    pulled, sent = _run_asgi([], chunks=64)
    assert pulled == settings.MAX_BODY_BYTES // MIB + 1  # the chunk that passed the limit
    assert [m["type"] for m in sent] == ["http.response.start", "http.response.body"]
    assert sent[0]["status"] == 413


# --- Django (WSGI, the test client) -------------------------------------------------------------


def test_django_refuses_a_large_body_with_the_envelope(api, settings):
    big = {"title": "x", "details": "y" * (settings.MAX_BODY_BYTES + 1)}
    response = api.post("/api/tasks", big)
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "TOO_LARGE"
    assert not Task.objects.exists()


@pytest.mark.parametrize("path", ["/login/", "/admin/login/"])
def test_pages_refuse_a_large_body_too(db, settings, path):
    response = Client().post(path, {"username": "x" * (settings.MAX_BODY_BYTES + 1)})
    assert response.status_code == 413


def test_a_route_may_take_a_larger_body(api, settings):
    big = {"title": "x", "details": "y" * (settings.MAX_BODY_BYTES + 1)}
    limit = settings.MAX_BODY_BYTES * 2
    with override_settings(BODY_LIMITS={"/api/tasks": limit}, DATA_UPLOAD_MAX_MEMORY_SIZE=limit):
        response = api.post("/api/tasks", big)
    # Past the body limit, the task's own rule answers: details are at most 20,000 characters.
    assert response.status_code == 422, response.content[:200]
    assert "details" in response.json()["error"]["message"]


# --- what daphne_guard relies on in daphne and Twisted (run on every upgrade) -------------------


def _upgrade_broke(what: str) -> str:
    return (
        f"daphne {package_version('daphne')} / Twisted {package_version('twisted')}: {what}; "
        "talorys/web/bodies.py daphne_guard relies on it to refuse oversized bodies as they arrive"
    )


class _Server:
    """What daphne's WebRequest asks of its server, recording the requests handed over."""

    proxy_forwarded_address_header = None
    root_path = ""
    server_name = b"daphne"

    def __init__(self) -> None:
        self.handed: list[bytes] = []

    def protocol_connected(self, protocol: object) -> None:
        pass

    def protocol_disconnected(self, protocol: object) -> None:
        pass

    def create_application(self, protocol: object, scope: dict) -> Deferred:
        self.handed.append(scope["path"].encode())
        return Deferred()  # the application never answers: only the hand-over is seen


def _daphne_connection(data: bytes) -> tuple[bytes, bool, _Server]:
    """The bytes through daphne's own HTTP protocol (its factory, its WebRequest) in memory:
    what it wrote back, whether it closed the connection, and what it handed over."""
    server = _Server()
    channel = HTTPFactory(server).buildProtocol(("127.0.0.1", 5000))
    transport = StringTransport(peerAddress=IPv4Address("TCP", "127.0.0.1", 5000))
    channel.makeConnection(transport)
    channel.dataReceived(data)
    answered = transport.value(), transport.disconnecting
    channel.connectionLost(Failure(ConnectionDone()))  # no timer left on the reactor
    return *answered, server


@pytest.mark.parametrize(
    ("checked", "hook"),
    [
        (GUARD_CHECKED, "talorys/web/bodies.py daphne_guard"),
        (CLOSE_FRAMES_CHECKED, "talorys/web/websocket.py daphne_close_frames"),
    ],
)
def test_each_daphne_hook_was_read_against_the_installed_versions(checked, hook):
    """Both hooks into daphne's internals name the versions they were read against: an upgrade
    fails here until someone re-reads the hook (and whether a setting of daphne's now does it)."""
    installed = {name: package_version(name) for name in checked}
    assert installed == checked, f"{installed} is not {checked}: re-read {hook} against it"


def test_daphne_still_builds_the_request_the_guard_hooks():
    daphne_guard()
    assert getattr(WebRequest, "_talorys_body_limit", False), _upgrade_broke("not hooked")
    hooked = {
        "gotLength": ["self", "length"],
        "handleContentChunk": ["self", "data"],
        "requestReceived": ["self", "command", "path", "version"],
    }
    for name, parameters in hooked.items():
        original = inspect.signature(getattr(TwistedRequest, name))
        assert list(original.parameters) == parameters, _upgrade_broke(f"{name}{original}")
    channel = HTTPFactory(_Server()).buildProtocol(("127.0.0.1", 5000))
    assert channel.requestFactory is WebRequest, _upgrade_broke("requests are not WebRequests")


def test_daphne_refuses_in_memory_by_length_and_by_chunks_and_hands_over_a_small_body(settings):
    daphne_guard()
    head = b"POST /api/tasks HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
    answer, closed, server = _daphne_connection(head + b"Content-Length: 999999999\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 413 "), _upgrade_broke("no 413 by length")
    assert closed and not server.handed, _upgrade_broke("the request went on after its 413")

    chunk = b"x" * 65536
    body = b"%x\r\n%s\r\n" % (len(chunk), chunk) * (settings.MAX_BODY_BYTES // len(chunk) + 2)
    answer, closed, server = _daphne_connection(head + b"Transfer-Encoding: chunked\r\n\r\n" + body)
    assert answer.startswith(b"HTTP/1.1 413 "), _upgrade_broke("no 413 by chunks")
    assert closed and not server.handed, _upgrade_broke("a refused body went on")

    answer, closed, server = _daphne_connection(head + b"Content-Length: 2\r\n\r\n{}")
    assert (answer, closed) == (b"", False)
    assert server.handed == [b"/api/tasks"], _upgrade_broke("a small body is not handed over")
