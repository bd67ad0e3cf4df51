"""What an HTTP failure of a model server means, for every client here (chat, structured
answers, embeddings): one mapping to ProviderError kinds and the owner-readable message; and the
key's header, refused before any request when no header can carry it.

No Django and no app imports: the embeddings client is used outside a configured project too.
"""

from __future__ import annotations

import json
import time
from typing import Any

import httpx

from talorys.lib.validation import HEADER_SAFE_TEXT, header_safe
from talorys.providers.base import ProviderError

# How much of an error body is worth showing the owner.
ERROR_EXCERPT_CHARS = 300


def bearer_headers(api_key: str, *, server: str) -> dict[str, str]:
    """The Authorization header for ``api_key``, or none without a key.

    A key that is not header-safe (a line break, a space, a non-ASCII letter: saved before the
    settings checked it, or from the environment) is ProviderError ``auth``: httpx would raise
    UnicodeEncodeError or a protocol error about an illegal header, which says nothing to the
    owner.
    """
    if not api_key:
        return {}
    if not header_safe(api_key):
        raise ProviderError(
            "auth",
            f"The {server}'s API key {HEADER_SAFE_TEXT}: enter it again in Settings "
            "(or fix it where the environment sets it).",
        )
    return {"Authorization": f"Bearer {api_key}"}


def error_message(payload: Any) -> str:
    if isinstance(payload, dict):
        for key in ("error", "message", "detail"):
            if key in payload:
                return error_message(payload[key])
    if isinstance(payload, list) and payload:
        return error_message(payload[0])
    return str(payload)


def error_detail(body: bytes) -> str:
    text = body.decode("utf-8", "replace").strip()
    try:
        payload = json.loads(text)
    except ValueError:
        return text[:ERROR_EXCERPT_CHARS]
    return error_message(payload)[:ERROR_EXCERPT_CHARS]


def read_answer(
    response: httpx.Response, *, server: str, max_bytes: int, deadline: float, timeout: float
) -> bytes:
    """The body of an answer, refused past ``max_bytes`` or past ``deadline`` (monotonic,
    ``timeout`` after the client's start: httpx's timeout measures each wait for bytes, so a
    server that sends a byte every few seconds passes it forever); raises what its status means."""
    pieces: list[bytes] = []
    size = 0
    for piece in response.iter_bytes():
        size += len(piece)
        if size > max_bytes:
            raise ProviderError(
                "bad_response",
                f"The {server}'s answer is unusable: its body passed {max_bytes} bytes.",
            )
        if time.monotonic() > deadline:
            raise ProviderError(
                "timeout", f"The {server} took more than {timeout:g} s to send its answer."
            )
        pieces.append(piece)
    body = b"".join(pieces)
    raise_for_status(response, body, server=server)
    return body


def raise_for_status(response: httpx.Response, body: bytes, *, server: str) -> None:
    """Nothing for a success; else raise the error the answer's status means."""
    status = response.status_code
    if response.is_success:
        return
    detail = error_detail(body)
    suffix = f": {detail}" if detail else "."
    if status in (401, 403):
        raise ProviderError("auth", f"The {server} refused the API key ({status}){suffix}")
    if status == 429:
        retry_after = response.headers.get("retry-after")
        # The server's detail rarely ends its sentence: "...requests: Slow down. Try again..."
        stop = "" if suffix.endswith((".", "!", "?")) else "."
        wait = f"{stop} Try again in {retry_after} s." if retry_after else ""
        raise ProviderError("rate_limited", f"The {server} is rate limiting requests{suffix}{wait}")
    raise ProviderError("bad_response", f"The {server} answered {status}{suffix}")


def transport_error(
    error: httpx.HTTPError,
    *,
    server: str,
    base_url: str,
    connect_timeout: float,
    read_timeout: float,
    received_headers: bool,
) -> ProviderError:
    """The error a failed exchange with the server means (connect, silence, a dropped body)."""
    if isinstance(error, httpx.ConnectTimeout):
        return ProviderError(
            "unreachable",
            f"Could not connect to the {server} at {base_url} within {connect_timeout:g} s.",
        )
    if isinstance(error, httpx.TimeoutException):
        return ProviderError(
            "timeout", f"The {server} went quiet for more than {read_timeout:g} s."
        )
    if isinstance(error, httpx.InvalidURL | httpx.UnsupportedProtocol):
        return ProviderError("unreachable", f"The {server}'s base URL {base_url!r} is not usable.")
    if isinstance(error, httpx.TransportError):
        if received_headers:
            return ProviderError("bad_response", f"The {server} dropped the answer: {error}.")
        return ProviderError("unreachable", f"Could not reach the {server} at {base_url}: {error}.")
    return ProviderError("bad_response", f"The {server}'s answer: {error}.")
