"""Where Web Push may send: an https:// push service at a public address, and nowhere else.

An endpoint comes from whoever registers it, and the worker POSTs to it at every notification,
so without these checks it could be aimed at this machine, the LAN or a cloud's metadata
address (a blind SSRF). It is checked twice: when it is registered (``endpoint_check``: https,
and a host that is not, or does not resolve to, a loopback, private, link-local, multicast,
reserved, unspecified or shared (100.64/10) address, nor an IPv6 address that carries one:
IPv4-mapped, 6to4, Teredo, NAT64; ``address_problem``), and at every
delivery (``endpoint_target``), after resolving its name once: the request is then sent to that
checked address (``push_session``), with the name kept for the Host header, SNI and the
certificate check, so a DNS answer that changes between the check and the connection
(rebinding) cannot move it. Redirects are never followed.

The operator may allow a self-hosted push service by name in ``TALORYS_PUSH_ALLOWED_HOSTS``
(``push.example.lan`` for any port, ``127.0.0.1:8443`` or ``[::1]:8443`` for one): such an
endpoint may be http:// or https:// at any address, and is sent to as its name resolves.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from typing import Any
from urllib.parse import SplitResult, urlsplit

import requests
from django.conf import settings
from requests.adapters import HTTPAdapter

from talorys.lib.errors import ValidationFailed

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
DEFAULT_PORTS = {"http": 80, "https": 443}


class EndpointRefused(Exception):
    """This endpoint is not one Talorys sends to; the message says why."""


@dataclass(frozen=True)
class Target:
    """Where one delivery goes: the checked address to connect to, or None to connect by name
    (an operator-allowed push service)."""

    name: str
    address: IPAddress | None


def _port(parts: SplitResult) -> int | None:
    try:
        return parts.port or DEFAULT_PORTS.get(parts.scheme)
    except ValueError:  # a port out of range or not a number
        return None


def _allowed(parts: SplitResult) -> bool:
    """Whether the operator allowed this endpoint's host (and port) by name."""
    host, port = (parts.hostname or "").lower(), _port(parts)
    for entry in settings.TALORYS_PUSH_ALLOWED_HOSTS:
        named = urlsplit(f"//{entry.strip().lower()}")
        try:
            entry_port = named.port
        except ValueError:
            continue
        if named.hostname == host and entry_port in (None, port):
            return True
    return False


# NAT64 (RFC 6052): the well-known prefix carries a public IPv4 address in its last 32 bits;
# the local-use prefix (RFC 8215) reaches the translator's own network only, so none of it is
# public, whatever it carries.
NAT64_WELL_KNOWN = ipaddress.IPv6Network("64:ff9b::/96")
NAT64_LOCAL_USE = ipaddress.IPv6Network("64:ff9b:1::/48")


def address_problem(address: IPAddress) -> str | None:
    """Why a push must not go to this address, or None when it is a public one.

    An IPv6 address that carries an IPv4 one (IPv4-mapped, 6to4, Teredo's client, NAT64) reaches
    that IPv4 address through a relay or translator, so it is refused for the address it
    carries as well as for its own."""
    if isinstance(address, ipaddress.IPv6Address):
        carried = embedded_ipv4(address)
        problem = None if carried is None else _own_problem(carried)
        if problem:
            return f"{problem} (embedded in {address})"
        if address.ipv4_mapped is not None or address in NAT64_WELL_KNOWN:
            # All it reaches is the address it carries (ipaddress calls the NAT64 prefix
            # reserved; a server on an IPv6-only network reaches IPv4 push services through it).
            return None
        if address in NAT64_LOCAL_USE:
            return f"{address} is not a public address"
    return _own_problem(address)


def embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries, if it is of a kind that carries one."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]  # the client's (ipaddress undoes its inversion)
    if address in NAT64_WELL_KNOWN:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def _own_problem(address: IPAddress) -> str | None:
    # is_global alone lets multicast through; the others say the same things more than once.
    public = address.is_global and not (
        address.is_multicast
        or address.is_reserved
        or address.is_unspecified
        or address.is_loopback
        or address.is_link_local
        or address.is_private
    )
    return None if public else f"{address} is not a public address"


def _literal(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def _resolve(host: str, port: int) -> list[IPAddress]:
    """Every address the name resolves to (raises OSError when it does not resolve)."""
    found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    # The scope of a link-local IPv6 address (fe80::1%eth0) is dropped: the address is refused.
    return [ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in found]


def _shape(endpoint: str) -> tuple[str, int]:
    """The endpoint's host and port, when it is an https:// URL with a host, or raise."""
    parts = urlsplit(endpoint)
    host, port = (parts.hostname or "").lower(), _port(parts)
    if parts.scheme != "https" or not host or port is None:
        raise EndpointRefused(
            "endpoint must be the https:// URL the browser's push service gave (http:// only "
            "to a push service the operator allows in TALORYS_PUSH_ALLOWED_HOSTS)."
        )
    return host, port


def _first_public(host: str, addresses: list[IPAddress]) -> IPAddress:
    for address in addresses:
        problem = address_problem(address)
        if problem:
            raise EndpointRefused(
                f"endpoint must be a public push service: {host} resolves to {problem}."
                if str(address) != host
                else f"endpoint must be a public push service: {problem}."
            )
    return addresses[0]


def endpoint_check(endpoint: str) -> str:
    """At registration: the endpoint, or ValidationFailed (422) saying why it is refused.

    A name that does not resolve now is accepted (a server without DNS for the moment, or a
    browser vendor's name): every delivery resolves and checks it again before sending.
    """
    try:
        endpoint_target(endpoint)
    except OSError:
        pass
    except EndpointRefused as exc:
        raise ValidationFailed(str(exc)) from exc
    return endpoint


def endpoint_target(endpoint: str) -> Target:
    """At delivery: where to connect, resolved once and checked, or EndpointRefused.

    Raises OSError when the name does not resolve (a network error: retried later).
    """
    parts = urlsplit(endpoint)
    if _allowed(parts) and parts.scheme in DEFAULT_PORTS:
        return Target(name=parts.hostname or "", address=None)
    host, port = _shape(endpoint)
    literal = _literal(host)
    addresses = [literal] if literal is not None else _resolve(host, port)
    return Target(name=host, address=_first_public(host, addresses))


class _NoRedirects(requests.Session):
    """A push service answers; it never sends us elsewhere (a redirect could point anywhere)."""

    def get_redirect_target(self, resp: requests.Response) -> None:
        return None


class _PinnedAdapter(HTTPAdapter):
    """Sends each request to the checked address instead of resolving the name again, with the
    name as the Host header, the TLS server name (SNI) and the name the certificate must have."""

    def __init__(self, target: Target) -> None:
        self.target = target
        super().__init__(max_retries=0)

    def init_poolmanager(self, connections: int, maxsize: int, block: bool = False, **kw: Any):
        name = self.target.name
        super().init_poolmanager(
            connections, maxsize, block, server_hostname=name, assert_hostname=name, **kw
        )

    def send(self, request: requests.PreparedRequest, *args: Any, **kwargs: Any):
        parts = urlsplit(request.url or "")
        if (parts.hostname or "").lower() != self.target.name:  # never another host's request
            raise requests.ConnectionError(f"refusing to send to {parts.hostname}")
        address = self.target.address
        host = f"[{address}]" if isinstance(address, ipaddress.IPv6Address) else str(address)
        request.headers["Host"] = parts.netloc.rpartition("@")[2]
        request.url = parts._replace(netloc=f"{host}:{_port(parts)}").geturl()
        return super().send(request, *args, **kwargs)


def push_session(target: Target) -> requests.Session:
    """The session pywebpush sends one delivery with (see the module's docstring)."""
    session = _NoRedirects()
    if target.address is not None:
        session.mount("https://", _PinnedAdapter(target))
    return session
