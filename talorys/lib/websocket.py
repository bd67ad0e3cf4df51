"""What stands in front of every WebSocket consumer (talorys/asgi.py): the origin check, the
answer to an unknown path, and close frames from daphne for a socket it fails
(``daphne_close_frames``: 1009 for a message past its size limit).

A browser sends the owner's session cookie with a WebSocket handshake from any page, so the
Origin header is what tells the app's own pages from another site's. Channels'
AllowedHostsOriginValidator compares host names only: a page served on another port of
127.0.0.1 (a dev server, another self-hosted app) passed it. Here an origin passes when it is
exactly the app's own (scheme, host and port, as Django's CSRF check reads them for HTTP) or
one of CSRF_TRUSTED_ORIGINS.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from asgiref.typing import Scope as AsgiScope
from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings
from django.http.request import split_domain_port, validate_host
from django.utils.http import is_same_domain

# What the checks read of a connection scope (channels and asgiref each type it their way).
Scope = Mapping[str, Any]

# A consumer whose ``channel_layer_alias`` names no configured layer gets none (Channels'
# get_channel_layer answers None, and the consumer listens to its client only): for a socket no
# other process speaks to, which then neither waits on Redis nor fails with it.
WITHOUT_CHANNEL_LAYER = "talorys-without-channel-layer"
# The close code of a socket that cannot be served for now, after which the page reconnects with
# backoff: HTTP's 503 in the application's range, as 4401 is its 401 (accounts/auth.py). The
# registry's own 1013 "Try Again Later" cannot be sent: daphne's autobahn lets an application
# close with 1000 or 3000-4999 only.
WEBSOCKET_TRY_AGAIN_LATER = 4503


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return value.decode("latin-1")
    return None


def _is_secure(scope: Scope) -> bool:
    """HTTPS as Django's ``request.is_secure()`` decides it: the proxy's header only when the
    operator trusts a proxy (SECURE_PROXY_SSL_HEADER), else what the server itself saw."""
    proxy_header = getattr(settings, "SECURE_PROXY_SSL_HEADER", None)
    if proxy_header:
        meta_name, secure_value = proxy_header
        # "HTTP_X_FORWARDED_PROTO" -> b"x-forwarded-proto"
        name = meta_name.removeprefix("HTTP_").replace("_", "-").lower().encode()
        value = _header(scope, name)
        if value is not None:
            return value.split(",", 1)[0].strip() == secure_value
    return scope.get("scheme") in ("wss", "https")


def own_origin(scope: Scope) -> str | None:
    """The app's own origin for this handshake (``https://host:port``), or None when the Host
    header is missing or not one of ALLOWED_HOSTS."""
    host = _header(scope, b"host")
    if not host:
        return None
    domain, _port = split_domain_port(host.lower())
    allowed = settings.ALLOWED_HOSTS
    if settings.DEBUG and not allowed:
        allowed = [".localhost", "127.0.0.1", "[::1]"]
    if not domain or not validate_host(domain, allowed):
        return None
    return f"{'https' if _is_secure(scope) else 'http'}://{host.lower()}"


def origin_allowed(scope: Scope) -> bool:
    """Whether the handshake comes from the app's own pages (or a CSRF-trusted origin).

    A handshake without an Origin header is refused. Browsers always send one on a WebSocket
    handshake, so the refusal costs the app's pages nothing; a client that is not a browser does
    not carry the cookie risk, but it can send the header as easily as the cookie, so there is
    no reason to open a second, header-less way in.
    """
    origin = _header(scope, b"origin")
    if not origin:
        return False
    origin = origin.strip().lower()
    if origin == own_origin(scope):
        return True
    trusted = [entry.lower() for entry in settings.CSRF_TRUSTED_ORIGINS]
    if origin in trusted:
        return True
    # CSRF_TRUSTED_ORIGINS may name subdomains ("https://*.example.com"), as Django reads it.
    parsed = urlsplit(origin)
    return any(
        parsed.scheme == entry_scheme and is_same_domain(parsed.netloc, entry_netloc[1:])
        for entry_scheme, entry_netloc in (
            (urlsplit(entry).scheme, urlsplit(entry).netloc) for entry in trusted
        )
        if entry_netloc.startswith("*")
    )


class Refuse(AsyncWebsocketConsumer):
    """Closes the handshake before accepting it: the client sees HTTP 403."""

    channel_layer_alias = WITHOUT_CHANNEL_LAYER

    async def connect(self) -> None:
        await self.close()


class OwnOriginValidator:
    """ASGI middleware: WebSockets from another origin are refused before any consumer runs."""

    def __init__(self, application: Any) -> None:
        self.application = application
        self.refuse = Refuse.as_asgi()

    async def __call__(self, scope: AsgiScope, receive: Any, send: Any) -> Any:
        if scope["type"] == "websocket" and not origin_allowed(scope):
            return await self.refuse(scope, receive, send)
        return await self.application(scope, receive, send)


def daphne_close_frames() -> None:
    """Make daphne close a failing WebSocket with a close frame and its code, not a dropped TCP
    connection. Idempotent; a no-op without daphne.

    autobahn, under daphne, fails a connection "by drop" unless told otherwise: a message past
    daphne's limit (``--websocket-max-message-size``, 1 MiB) or a protocol violation cut the
    connection without a word, and the page could not tell it from a network fault. Without
    the drop it sends the close frame first (1009 "message too big", 1002...), waits for the
    client's for at most its closing handshake timeout (1 s), then drops. The hook is on
    daphne's WebSocketFactory: autobahn's ``resetProtocolOptions`` sets ``failByDrop`` when the
    factory is made, and daphne's ``setProtocolOptions`` call leaves it alone.
    (tests/agent/test_socket_frames.py fails when an upgrade changes either.)
    """
    try:
        from daphne.ws_protocol import WebSocketFactory
    except ImportError:
        return
    if getattr(WebSocketFactory, "_talorys_close_frames", False):
        return
    reset = WebSocketFactory.resetProtocolOptions

    def reset_with_close_frames(self: Any) -> None:
        reset(self)
        self.failByDrop = False

    WebSocketFactory.resetProtocolOptions = reset_with_close_frames
    WebSocketFactory._talorys_close_frames = True
