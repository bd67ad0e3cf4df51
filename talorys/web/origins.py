"""Whether an ASGI request comes to one of the app's own hosts, and from one of its own origins:
the checks Django makes for its pages (ALLOWED_HOSTS; the CSRF check's origin), for what Django's
middleware never sees: the WebSocket handshakes (talorys/web/websocket.py) and ``/mcp``
(config/mcp/gate.py).

A browser sends the owner's session cookie with a WebSocket handshake from any page, and any
page can make a browser send a request to a local server, so the Origin header is what tells
the app's own pages from another site's. Channels' AllowedHostsOriginValidator compares host
names only: a page served on another port of 127.0.0.1 (a dev server, another self-hosted app)
passed it. Here an origin passes when it is exactly the app's own (scheme, host and port, as
Django's CSRF check reads them for HTTP) or one of CSRF_TRUSTED_ORIGINS.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.http.request import split_domain_port, validate_host
from django.utils.http import is_same_domain

# What the checks read of a connection scope (channels and asgiref each type it their way).
Scope = Mapping[str, Any]


def scope_header(scope: Scope, name: bytes) -> str | None:
    """The first ``name`` header of an ASGI scope (``name`` in lower case), or None."""
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
        value = scope_header(scope, name)
        if value is not None:
            return value.split(",", 1)[0].strip() == secure_value
    return scope.get("scheme") in ("wss", "https")


def own_origin(scope: Scope) -> str | None:
    """The app's own origin for this request (``https://host:port``), or None when the Host
    header is missing or not one of ALLOWED_HOSTS (what Django answers 400 for)."""
    host = scope_header(scope, b"host")
    if not host:
        return None
    domain, _port = split_domain_port(host.lower())
    allowed = settings.ALLOWED_HOSTS
    if settings.DEBUG and not allowed:
        allowed = [".localhost", "127.0.0.1", "[::1]"]
    if not domain or not validate_host(domain, allowed):
        return None
    return f"{'https' if _is_secure(scope) else 'http'}://{host.lower()}"


def origin_trusted(scope: Scope, origin: str) -> bool:
    """Whether ``origin`` (an Origin header) is the app's own or a CSRF-trusted one."""
    origin = origin.strip().lower()
    if origin == own_origin(scope):
        return True
    trusted = [entry.lower() for entry in settings.CSRF_TRUSTED_ORIGINS]
    if origin in trusted:
        return True
    # CSRF_TRUSTED_ORIGINS may name subdomains ("https://*.example.com"), as Django reads it.
    parsed = urlsplit(origin)
    return any(
        parsed.scheme == entry.scheme and is_same_domain(parsed.netloc, entry.netloc[1:])
        for entry in map(urlsplit, trusted)
        if entry.netloc.startswith("*")
    )


def origin_allowed(scope: Scope) -> bool:
    """Whether a WebSocket handshake comes from the app's own pages (or a CSRF-trusted origin).

    A handshake without an Origin header is refused. Browsers always send one on a WebSocket
    handshake, so the refusal costs the app's pages nothing; a client that is not a browser does
    not carry the cookie risk, but it can send the header as easily as the cookie, so there is
    no reason to open a second, header-less way in.
    """
    origin = scope_header(scope, b"origin")
    return bool(origin) and origin_trusted(scope, origin or "")
