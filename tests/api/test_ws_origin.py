"""WebSocket handshakes are accepted from the app's own origin only (scheme, host and port), or
from CSRF_TRUSTED_ORIGINS; an unknown /ws/ path is refused, not a server error.

A page on another port of the same host (a dev server, another self-hosted app) gets the owner's
cookie sent with its handshake; before, the host-only check let it drive the chat socket.
"""

from __future__ import annotations

import base64
import os
import socket
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from django.test import Client, override_settings

from agent.models import Conversation
from config.asgi import application
from talorys.workspace.models import Task
from tests.agent.test_runner import use_fake
from tests.conftest import OWNER_PASSWORD
from tests.waiting import HANG_SECONDS

pytestmark = pytest.mark.django_db(transaction=True)

PATHS = ["/ws/chat/", "/ws/notifications/"]


@pytest.fixture
def cookie(owner) -> bytes:
    client = Client()
    assert client.login(username="owner", password=OWNER_PASSWORD)
    return f"sessionid={client.cookies['sessionid'].value}".encode()


def handshake(
    path: str,
    *,
    host: str | None,
    origin: str | None,
    cookie: bytes = b"",
    scheme: str = "ws",
    extra: list[tuple[bytes, bytes]] | None = None,
) -> tuple[bool, Any]:
    headers = [(b"host", host.encode())] if host is not None else []
    headers += [(b"origin", origin.encode())] if origin is not None else []
    headers += [(b"cookie", cookie)] if cookie else []
    headers += extra or []

    async def scenario() -> tuple[bool, Any]:
        ws = WebsocketCommunicator(application, path, headers=headers)
        ws.scope["scheme"] = scheme
        connected, code = await ws.connect()
        await ws.disconnect()
        return connected, code

    return async_to_sync(scenario)()


@pytest.mark.parametrize("path", PATHS)
def test_the_apps_own_origin_connects(cookie, path):
    assert handshake(path, host="127.0.0.1:8000", origin="http://127.0.0.1:8000", cookie=cookie)[0]
    assert handshake(path, host="localhost", origin="http://localhost", cookie=cookie)[0]


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize(
    "origin",
    [
        "http://127.0.0.1:3000",  # another app on the same host: the reported attack
        "http://127.0.0.1",  # same host, default port
        "https://127.0.0.1:8000",  # same host and port, other scheme
        "http://localhost:8000",  # an allowed host name, but not the one the page was served as
        "https://evil.example",
        "null",  # sandboxed iframes and file: pages
    ],
)
def test_other_origins_are_refused(cookie, path, origin):
    assert handshake(path, host="127.0.0.1:8000", origin=origin, cookie=cookie)[0] is False


def test_a_page_on_another_port_cannot_add_a_task(cookie, fake_openai):
    use_fake(fake_openai)

    async def scenario() -> bool:
        ws = WebsocketCommunicator(
            application,
            "/ws/chat/",
            headers=[
                (b"host", b"127.0.0.1:8000"),
                (b"origin", b"http://127.0.0.1:5173"),
                (b"cookie", cookie),
            ],
        )
        connected, _ = await ws.connect()
        if connected:
            await ws.send_json_to({"type": "send", "text": "Add a task to wire the money"})
            while (await ws.receive_json_from(timeout=HANG_SECONDS))["type"] != "done":
                pass
        await ws.disconnect()
        return connected

    assert async_to_sync(scenario)() is False
    assert not Task.objects.exists()
    assert not Conversation.objects.exists()
    assert fake_openai.requests == []


@pytest.mark.parametrize("path", PATHS)
def test_a_handshake_without_origin_or_host_is_refused(cookie, path):
    # Browsers always send Origin; refusing its absence costs the app's pages nothing.
    assert handshake(path, host="127.0.0.1:8000", origin=None, cookie=cookie)[0] is False
    assert handshake(path, host=None, origin="http://127.0.0.1:8000", cookie=cookie)[0] is False


def test_a_host_outside_allowed_hosts_is_refused(cookie):
    # DNS rebinding: the attacker's name resolves to 127.0.0.1, so its origin matches its Host.
    assert (
        handshake(
            "/ws/chat/", host="evil.example:8000", origin="http://evil.example:8000", cookie=cookie
        )[0]
        is False
    )


@override_settings(CSRF_TRUSTED_ORIGINS=["https://talorys.example.net", "https://*.home.example"])
@pytest.mark.parametrize("path", PATHS)
def test_csrf_trusted_origins_connect(cookie, path):
    assert handshake(
        path, host="127.0.0.1:8000", origin="https://talorys.example.net", cookie=cookie
    )[0]
    assert handshake(path, host="127.0.0.1:8000", origin="https://app.home.example", cookie=cookie)[
        0
    ]
    assert not handshake(
        path, host="127.0.0.1:8000", origin="http://app.home.example", cookie=cookie
    )[0]
    assert not handshake(
        path, host="127.0.0.1:8000", origin="https://talorys.example.net:8443", cookie=cookie
    )[0]


def test_the_scheme_is_the_servers_unless_a_proxy_is_trusted(cookie):
    forwarded = [(b"x-forwarded-proto", b"https")]
    # A TLS connection to the server itself.
    assert handshake(
        "/ws/chat/", host="localhost", origin="https://localhost", cookie=cookie, scheme="wss"
    )[0]
    # Without a trusted proxy, anyone can write X-Forwarded-Proto: it is ignored.
    assert not handshake(
        "/ws/chat/", host="localhost", origin="https://localhost", cookie=cookie, extra=forwarded
    )[0]
    with override_settings(SECURE_PROXY_SSL_HEADER=("HTTP_X_FORWARDED_PROTO", "https")):
        assert handshake(
            "/ws/chat/",
            host="localhost",
            origin="https://localhost",
            cookie=cookie,
            extra=forwarded,
        )[0]
        assert not handshake(
            "/ws/chat/", host="localhost", origin="http://localhost", cookie=cookie, extra=forwarded
        )[0]


def test_an_unknown_path_is_refused_not_a_server_error(db):
    assert handshake("/ws/nope/", host="127.0.0.1:8000", origin="http://127.0.0.1:8000") == (
        False,
        1000,
    )


def _raw_handshake(url: str, path: str, origin: str, cookie: str = "") -> int:
    parts = urlsplit(url)
    key = base64.b64encode(os.urandom(16)).decode()
    request = (
        f"GET {path} HTTP/1.1\r\nHost: {parts.netloc}\r\nUpgrade: websocket\r\n"
        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
        f"Origin: {origin}\r\nCookie: {cookie}\r\n\r\n"
    )
    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall(request.encode())
        status_line = sock.recv(4096).split(b"\r\n", 1)[0]
    return int(status_line.split()[1])


def test_unknown_paths_and_foreign_origins_get_403_from_the_server(live_server_url):
    login = httpx.post(
        f"{live_server_url}/api/auth/login",
        json={"username": "owner", "password": OWNER_PASSWORD},
    )
    assert login.status_code == 200
    cookie = f"sessionid={login.cookies['sessionid']}"
    origin = live_server_url
    assert _raw_handshake(live_server_url, "/ws/nope/", origin) == 403
    assert _raw_handshake(live_server_url, "/ws/", origin, cookie) == 403
    assert _raw_handshake(live_server_url, "/ws/chat/", "http://127.0.0.1:1", cookie) == 403
    # The app's own page still gets in.
    assert _raw_handshake(live_server_url, "/ws/chat/", origin, cookie) == 101
    assert _raw_handshake(live_server_url, "/ws/notifications/", origin, cookie) == 101
