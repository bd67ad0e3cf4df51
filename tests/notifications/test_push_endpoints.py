"""Web Push endpoints are public https:// push services only: refused at
registration with a clear 422, refused again at delivery after resolving the name (nothing is
sent, proved by a real listener that no connection arrives), sent to the address that was
checked (a real HTTPS server with its own certificate), never redirected; the subscriptions are
the owner's session only."""

from __future__ import annotations

import datetime as dt
import ipaddress
import socket
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from talorys.accounts.services import api_token_create
from talorys.notifications import push
from talorys.notifications.models import PushDelivery, PushSubscription
from talorys.notifications.push_endpoints import Target, push_session
from talorys.notifications.services import notification_create
from tests.notifications.servers import serve

# A Teredo address's server (65.54.227.120) and flags; its last 32 bits are the client's.
TEREDO = "2001:0:4136:e378:8000:63bf:"
REFUSED = [
    ("http://push.example.com/x", "https:// URL"),
    ("https://127.0.0.1/x", "127.0.0.1 is not a public address"),
    ("https://127.0.0.1:8443/x", "127.0.0.1 is not a public address"),
    ("https://[::1]/x", "::1 is not a public address"),
    ("https://[::ffff:127.0.0.1]/x", "127.0.0.1 is not a public address"),
    ("https://169.254.169.254/latest/meta-data", "169.254.169.254 is not a public address"),
    ("https://10.1.2.3/x", "10.1.2.3 is not a public address"),
    ("https://172.16.0.1/x", "172.16.0.1 is not a public address"),
    ("https://192.168.1.5/x", "192.168.1.5 is not a public address"),
    ("https://100.64.0.1/x", "100.64.0.1 is not a public address"),
    ("https://0.0.0.0/x", "0.0.0.0 is not a public address"),
    ("https://224.0.0.1/x", "224.0.0.1 is not a public address"),
    ("https://[fe80::1]/x", "fe80::1 is not a public address"),
    # IPv6 addresses that carry an IPv4 one, each refused for the address it carries.
    ("https://[::ffff:10.1.2.3]/x", "10.1.2.3 is not a public address (embedded in ::ffff:"),
    ("https://[::ffff:192.168.1.5]/x", "192.168.1.5 is not a public address (embedded in ::ffff"),
    # 6to4 (2002::/16): the IPv4 address is bits 16-47.
    ("https://[2002:7f00:1::1]/x", "127.0.0.1 is not a public address (embedded in 2002:7f00"),
    ("https://[2002:a01:203::1]/x", "10.1.2.3 is not a public address (embedded in 2002:a01"),
    ("https://[2002:c0a8:105::1]/x", "192.168.1.5 is not a public address (embedded in 2002:"),
    # Teredo (2001::/32): the client's IPv4 address is the last 32 bits, inverted.
    (f"https://[{TEREDO}80ff:fffe]/x", "127.0.0.1 is not a public address (embedded in 2001:"),
    (f"https://[{TEREDO}f5fe:fdfc]/x", "10.1.2.3 is not a public address (embedded in 2001:"),
    (f"https://[{TEREDO}3f57:fefa]/x", "192.168.1.5 is not a public address (embedded in 2001:"),
    # NAT64's well-known prefix (64:ff9b::/96): the IPv4 address is the last 32 bits.
    ("https://[64:ff9b::7f00:1]/x", "127.0.0.1 is not a public address (embedded in 64:ff9b::"),
    ("https://[64:ff9b::a01:203]/x", "10.1.2.3 is not a public address (embedded in 64:ff9b::"),
    ("https://[64:ff9b::c0a8:105]/x", "192.168.1.5 is not a public address (embedded in 64:ff"),
    # NAT64's local-use prefix (64:ff9b:1::/48) translates to the local network only.
    ("https://[64:ff9b:1::5db8:d70e]/x", "64:ff9b:1::5db8:d70e is not a public address"),
    ("https://[64:ff9b:1::c0a8:105]/x", "64:ff9b:1::c0a8:105 is not a public address"),
    # A name is resolved: localhost resolves to this machine.
    ("https://localhost/x", "localhost resolves to 127.0.0.1 is not a public address"),
]


@pytest.mark.parametrize(("endpoint", "message"), REFUSED)
def test_an_endpoint_that_is_not_a_public_https_service_is_refused(api, browser, endpoint, message):
    response = api.post("/api/push/subscriptions", browser.subscription(endpoint))
    assert response.status_code == 422, response.content
    assert response.json()["error"]["code"] == "VALIDATION"
    assert message in response.json()["error"]["message"]
    assert not PushSubscription.objects.exists()


def test_public_push_services_are_taken(api, browser):
    for endpoint in (
        "https://93.184.215.14/push/1",  # a public address
        "https://[2002:5db8:d70e::1]/push/3",  # 6to4, NAT64 and mapped, each of a public one
        "https://[64:ff9b::5db8:d70e]/push/4",
        "https://[::ffff:93.184.215.14]/push/5",
        "https://push.example.com/push/2",  # a name: checked at delivery when it resolves
    ):
        response = api.post("/api/push/subscriptions", browser.subscription(endpoint))
        assert response.status_code == 201, response.content


def test_the_operator_allows_a_self_hosted_push_service_by_name(api, browser, settings):
    settings.TALORYS_PUSH_ALLOWED_HOSTS = ["push.example.lan", "127.0.0.1:8443"]
    for endpoint in ("http://127.0.0.1:8443/push/1", "https://push.example.lan:9000/push/2"):
        response = api.post("/api/push/subscriptions", browser.subscription(endpoint))
        assert response.status_code == 201, response.content
    other_port = api.post("/api/push/subscriptions", browser.subscription("https://127.0.0.1/x"))
    assert other_port.status_code == 422
    assert PushSubscription.objects.count() == 2


@pytest.mark.parametrize("scope", ["read", "write"])
def test_push_subscriptions_are_the_owners_session_only(api, anon_api, browser, owner, scope):
    mine = api.post("/api/push/subscriptions", browser.subscription("https://93.184.215.14/p"))
    assert mine.status_code == 201
    _token, raw = api_token_create(user=owner, name="script", scope=scope)
    token = {"Authorization": f"Bearer {raw}"}
    body = browser.subscription("https://93.184.215.14/other")

    # Refused as every session-only route refuses a token (owner_session_auth): 401.
    for response in (
        anon_api.get("/api/push/subscriptions", headers=token),
        anon_api.post("/api/push/subscriptions", body, headers=token),
        anon_api.delete(f"/api/push/subscriptions/{mine.json()['id']}", headers=token),
    ):
        assert response.status_code == 401, response.content
        assert response.json()["error"]["code"] == "UNAUTHORIZED"
    assert list(PushSubscription.objects.values_list("endpoint", flat=True)) == [
        "https://93.184.215.14/p"
    ]
    assert api.get("/api/push/subscriptions").json()["count"] == 1


# --- at delivery -------------------------------------------------------------------------------


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A real TCP server on this machine that accepts nothing by itself: a connection made to it
    waits in its backlog, where the test finds it."""
    server = socket.create_server(("127.0.0.1", 0))
    server.setblocking(False)
    yield server
    server.close()


def connections(server: socket.socket) -> int:
    count = 0
    while True:
        try:
            conn, _ = server.accept()
        except BlockingIOError:
            return count
        conn.close()
        count += 1


def deliver(browser, endpoint: str) -> PushDelivery:
    """A subscription saved before this check existed (or whose name now resolves elsewhere),
    and one notification's delivery to it."""
    keys = browser.subscription(endpoint)["keys"]
    PushSubscription.objects.create(endpoint=endpoint, p256dh=keys["p256dh"], auth=keys["auth"])
    notification = notification_create(title="Hello")
    (delivery_id,) = push.push_deliveries_create(notifications=[notification])
    push.push_delivery_send(delivery_id=delivery_id)
    return PushDelivery.objects.get(pk=delivery_id)


# The 6to4 one: a subscription registered before such addresses were refused.
@pytest.mark.parametrize("host", ["localhost", "127.0.0.1", "[2002:7f00:1::1]"])
def test_a_delivery_to_a_name_that_resolves_to_this_machine_is_not_sent(
    db, browser, listener, host
):
    port = listener.getsockname()[1]

    delivery = deliver(browser, f"https://{host}:{port}/push/x")

    assert delivery.status == "failed"
    assert "127.0.0.1 is not a public address" in delivery.error
    assert connections(listener) == 0  # nothing even connected
    assert PushSubscription.objects.get().last_success_at is None


def test_a_name_that_does_not_resolve_is_retried_later(db, browser):
    delivery = deliver(browser, "https://push.invalid/x")  # .invalid never resolves
    assert delivery.status == "pending" and "could not resolve" in delivery.error


# --- the connection goes to the checked address ------------------------------------------------


class TlsPushService:
    """A real HTTPS server on 127.0.0.1 with a certificate for ``name`` from a CA of its own;
    records each request's Host header and TLS server name, and answers ``status``."""

    def __init__(self, name: str, folder: Path) -> None:
        self.name, self.status, self.location = name, 201, ""
        self.seen: list[tuple[str, str | None]] = []
        self.ca_file = folder / "ca.pem"
        context = self._context(folder)
        service = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                service.seen.append((self.headers["Host"], service.server_names.pop(0)))
                self.send_response(service.status)
                if service.location:
                    self.send_header("Location", service.location)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server_names: list[str | None] = []
        context.sni_callback = lambda sock, sni, ctx: self.server_names.append(sni)
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
        self.port = self.server.server_address[1]
        threading.Thread(target=serve, args=(self.server,), daemon=True).start()

    def _context(self, folder: Path) -> ssl.SSLContext:
        ca_key, key = (
            ec.generate_private_key(ec.SECP256R1()),
            ec.generate_private_key(ec.SECP256R1()),
        )
        now = dt.datetime.now(dt.UTC)

        def cert(subject: str, public, issuer: str, extensions) -> x509.Certificate:
            builder = (
                x509.CertificateBuilder()
                .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
                .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)]))
                .public_key(public)
                .serial_number(x509.random_serial_number())
                .not_valid_before(now - dt.timedelta(hours=1))
                .not_valid_after(now + dt.timedelta(hours=1))
            )
            for extension, critical in extensions:
                builder = builder.add_extension(extension, critical=critical)
            return builder.sign(ca_key, hashes.SHA256())

        ca = cert(
            "Test CA", ca_key.public_key(), "Test CA", [(x509.BasicConstraints(True, None), True)]
        )
        leaf = cert(
            self.name,
            key.public_key(),
            "Test CA",
            [(x509.SubjectAlternativeName([x509.DNSName(self.name)]), False)],
        )
        self.ca_file.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
        chain = folder / "leaf.pem"
        chain.write_bytes(
            leaf.public_bytes(serialization.Encoding.PEM)
            + key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(chain)
        return context

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def tls_push(tmp_path) -> Iterator[TlsPushService]:
    service = TlsPushService("push.test", tmp_path)
    yield service
    service.stop()


def test_the_request_goes_to_the_checked_address_with_the_names_host_and_tls(tls_push):
    # push.test resolves nowhere: only the pinned address can have reached the server.
    target = Target(name="push.test", address=ipaddress.ip_address("127.0.0.1"))
    url = f"https://push.test:{tls_push.port}/push/x"
    with push_session(target) as session:
        response = session.post(url, data=b"hello", verify=str(tls_push.ca_file), timeout=10)
    assert response.status_code == 201
    assert tls_push.seen == [(f"push.test:{tls_push.port}", "push.test")]


def test_a_redirect_is_not_followed(tls_push, listener):
    tls_push.status = 307
    tls_push.location = f"http://127.0.0.1:{listener.getsockname()[1]}/internal"
    target = Target(name="push.test", address=ipaddress.ip_address("127.0.0.1"))
    with push_session(target) as session:
        response = session.post(
            f"https://push.test:{tls_push.port}/push/x",
            data=b"hello",
            verify=str(tls_push.ca_file),
            timeout=10,
        )
    assert response.status_code == 307
    assert len(tls_push.seen) == 1
    assert connections(listener) == 0
