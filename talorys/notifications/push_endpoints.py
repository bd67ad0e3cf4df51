"""Where Web Push may send: an https:// push service at a public address, and nowhere else.

An endpoint comes from whoever registers it, and the worker POSTs to it at every notification,
so without these checks it could be aimed at this machine, the LAN or a cloud's metadata
address (a blind SSRF). It is checked twice: when it is registered (``endpoint_check``: https,
and a host that is not, or does not resolve to, a loopback, private, link-local, multicast,
reserved, unspecified or shared (100.64/10) address, IPv4-mapped IPv6 included), and at every
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


def address_problem(address: IPAddress) -> str | None:
    """Why a push must not go to this address, or None when it is a public one."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
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


def _shape(endpoint: str) -> tuple[SplitResult, str, int]:
    """The endpoint's parts, host and port, when it is an https:// URL with a host, or raise."""
    parts = urlsplit(endpoint)
    host, port = (parts.hostname or "").lower(), _port(parts)
    if parts.scheme != "https" or not host or port is None:
        raise EndpointRefused(
            "endpoint must be the https:// URL the browser's push service gave (http:// only "
            "to a push service the operator allows in TALORYS_PUSH_ALLOWED_HOSTS)."
        )
    return parts, host, port


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
    parts = urlsplit(endpoint)
    if _allowed(parts) and parts.scheme in DEFAULT_PORTS:
        return endpoint
    try:
        _parts, host, port = _shape(endpoint)
        literal = _literal(host)
        if literal is not None:
            _first_public(host, [literal])
            return endpoint
        try:
            addresses = _resolve(host, port)
        except OSError:
            return endpoint
        _first_public(host, addresses)
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
    _parts, host, port = _shape(endpoint)
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
