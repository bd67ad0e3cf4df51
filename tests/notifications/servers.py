"""Fixtures for notifications, for the whole suite (tests/conftest.py loads this module as a
plugin, so a test anywhere asks for them by name): a real local push service and a browser's push
keys, and real receivers in place of a channel's service (a JSON webhook, an ntfy server)."""

from __future__ import annotations

import base64
import json
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import http_ece
import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat


def serve(server: ThreadingHTTPServer) -> None:
    """Serve until ``shutdown()``, which returns at the next poll: the standard 0.5 s poll cost
    every test that started a server half a second at its teardown."""
    server.serve_forever(poll_interval=0.05)


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


@dataclass
class Browser:
    """A browser's push keys: what it would give in PushSubscription.toJSON()."""

    private_key: ec.EllipticCurvePrivateKey = field(
        default_factory=lambda: ec.generate_private_key(ec.SECP256R1())
    )
    auth_secret: bytes = field(default_factory=lambda: os.urandom(16))

    @property
    def p256dh(self) -> str:
        point = self.private_key.public_key().public_bytes(
            Encoding.X962, PublicFormat.UncompressedPoint
        )
        return b64url(point)

    @property
    def auth(self) -> str:
        return b64url(self.auth_secret)

    def subscription(self, endpoint: str) -> dict[str, Any]:
        return {
            "endpoint": endpoint,
            "expirationTime": None,
            "keys": {"p256dh": self.p256dh, "auth": self.auth},
        }

    def decrypt(self, body: bytes) -> dict[str, Any]:
        plain = http_ece.decrypt(
            body, private_key=self.private_key, auth_secret=self.auth_secret, version="aes128gcm"
        )
        return json.loads(plain)


@dataclass
class PushRequest:
    path: str
    headers: dict[str, str]  # names in lower case
    body: bytes


class PushService:
    """A real HTTP server in place of a browser vendor's push service: records every POST and
    answers with ``status`` (201 unless a test says otherwise)."""

    def __init__(self) -> None:
        self.requests: list[PushRequest] = []
        self.status = 201
        service = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                service.requests.append(
                    PushRequest(
                        self.path,
                        {k.lower(): v for k, v in self.headers.items()},
                        self.rfile.read(length),
                    )
                )
                self.send_response(service.status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=serve, args=(self.server,), daemon=True)

    def endpoint(self, name: str = "browser-1") -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/push/{name}"

    def start(self) -> PushService:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def push_service(settings) -> Iterator[PushService]:
    service = PushService().start()
    # A push service on this machine, plain HTTP: allowed by name, as an operator would.
    settings.TALORYS_PUSH_ALLOWED_HOSTS = [f"127.0.0.1:{service.server.server_address[1]}"]
    yield service
    service.stop()


@pytest.fixture
def browser() -> Browser:
    return Browser()


class Receiver:
    """A real HTTP server on 127.0.0.1 in place of a channel's service (a JSON webhook, an ntfy
    server): records every POST's JSON and answers each with the next of ``answers`` (200 when
    they run out), in ntfy's shape, which a webhook's client ignores."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.answers: list[int] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                receiver.paths.append(self.path)
                receiver.received.append(json.loads(self.rfile.read(length) or b"{}"))
                status = receiver.answers.pop(0) if receiver.answers else 200
                body = json.dumps({"id": "m1", "event": "message", "time": 1}).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=serve, args=(self.server,), daemon=True)
        self.thread.start()

    def messages(self) -> list[str]:
        return [message.get("message", "") for message in self.received]

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def webhook() -> Iterator[Receiver]:
    """A JSON webhook receiver: Apprise's json://127.0.0.1:<port>/hook."""
    receiver = Receiver()
    yield receiver
    receiver.stop()


@pytest.fixture
def ntfy() -> Iterator[Receiver]:
    """An ntfy-compatible server: Apprise's ntfy://127.0.0.1:<port>/<topic>."""
    receiver = Receiver()
    yield receiver
    receiver.stop()
