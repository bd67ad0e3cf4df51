"""What every ``/mcp`` request passes before the SDK sees it, in this order:

1. Host and Origin, as the rest of the app checks them (talorys/web/origins.py): a Host that is
   not one of ALLOWED_HOSTS is a 400, as Django answers it; an Origin that is not the app's own
   or a CSRF-trusted one is a 403, so no other site's page can make a browser call the server
   (a DNS-rebinding page included: its Host is then not ours). A request without an Origin, as
   MCP clients send (they are not browsers), passes.
2. POST only (405 otherwise). The server is stateless (config/mcp/http.py): every JSON-RPC
   request is one POST answered in its response, so it never has anything to send on the
   Streamable HTTP transport's server-to-client stream (GET) and has no session to end
   (DELETE). The MCP specification lets a server answer 405 to both, which clients take as
   "no such stream"; an open GET held a task and a connection until the client went away,
   whatever became of its token.
3. The token (401 without a valid one), its request counted against its minute (429 past it,
   config/mcp/access.py).
4. The body: JSON, and one JSON-RPC message as the SDK reads it; else a 400 in our words, where
   the SDK would have put pydantic's report (config/mcp/errors.py).
"""

from __future__ import annotations

import json
from typing import Any

from channels.db import database_sync_to_async

from config.mcp.access import Caller, caller_admit
from config.mcp.errors import (
    APP_ERROR,
    INVALID_REQUEST,
    PARSE_ERROR,
    app_error_data,
    rpc_error_body,
)
from talorys.accounts.services import bearer_secret
from talorys.lib.errors import RateLimited, Unauthorized, code_for_status, error_body
from talorys.web.origins import origin_trusted, own_origin, scope_header

# No OAuth here: the 401 says what to do in words, and its WWW-Authenticate names no
# resource_metadata, which would send a client looking for an authorization server.
UNAUTHORIZED = (
    "This MCP server takes a Talorys API token, not OAuth: create one in Settings (/settings/, "
    "API tokens) and send it as Authorization: Bearer tal_…."
)
BAD_HOST = "The Host header names a host this server does not serve (ALLOWED_HOSTS)."
FOREIGN_ORIGIN = "Requests from another site's pages are refused (the Origin header)."
POST_ONLY = (
    "/mcp takes POST only: each request is answered in its response, so there is no stream to "
    "open (GET) and no session to end (DELETE)."
)
NOT_JSON = "The request body is not valid JSON."
NOT_A_MESSAGE = (
    "The request body is not a JSON-RPC 2.0 message: send one request or notification, "
    'an object with "jsonrpc": "2.0" and a "method".'
)

Headers = list[tuple[bytes, bytes]]


async def _answer(send: Any, status: int, body: bytes, headers: Headers | None = None) -> None:
    start = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send(
        {"type": "http.response.start", "status": status, "headers": start + (headers or [])}
    )
    await send({"type": "http.response.body", "body": body})


async def _refuse(send: Any, status: int, message: str, headers: Headers | None = None) -> None:
    """A refusal in the API's envelope (talorys/lib/errors.py), for a request the MCP server
    does not take at all."""
    body = json.dumps(error_body(code_for_status(status), message)).encode()
    await _answer(send, status, body, headers)


def _place_refusal(scope: dict[str, Any]) -> tuple[int, str, Headers] | None:
    """Steps 1 and 2: where the request comes from and its method."""
    if own_origin(scope) is None:
        return 400, BAD_HOST, []
    origin = scope_header(scope, b"origin")
    if origin is not None and not origin_trusted(scope, origin):
        return 403, FOREIGN_ORIGIN, []
    if scope.get("method") != "POST":
        return 405, POST_ONLY, [(b"allow", b"POST")]
    return None


async def _admitted(scope: dict[str, Any], send: Any) -> Caller | None:
    """Step 3: the caller, its request counted; None when refused (answered here)."""
    raw = bearer_secret(scope_header(scope, b"authorization"))
    try:
        caller = await database_sync_to_async(caller_admit)(raw) if raw else None
    except RateLimited as exc:
        retry = [(b"retry-after", str(exc.retry_after).encode())]
        # In JSON-RPC's shape, which an MCP client shows as the failure of the call it made.
        body = rpc_error_body(APP_ERROR, exc.message, app_error_data(exc))
        await _answer(send, exc.status, body, retry)
        return None
    if caller is None:
        realm = [(b"www-authenticate", b'Bearer realm="talorys"')]
        await _refuse(send, Unauthorized.status, UNAUTHORIZED, realm)
    return caller


async def _body(receive: Any) -> bytes | None:
    """The whole body (bounded by talorys/web/bodies.py), or None when the client went away."""
    chunks = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)


def _body_refusal(body: bytes) -> bytes | None:
    """Step 4: our JSON-RPC error for a body the SDK would refuse, or None."""
    # What the SDK checks (mcp.server.streamable_http), with its adapter; imported here, as the
    # SDK is loaded at the first request a token makes, not in every web process (http.py).
    from mcp.types import jsonrpc_message_adapter
    from pydantic import ValidationError

    try:
        parsed = json.loads(body)
    except (ValueError, RecursionError):  # not JSON; nested deeper than Python parses
        return rpc_error_body(PARSE_ERROR, NOT_JSON)
    try:
        jsonrpc_message_adapter.validate_python(parsed, by_name=False)
    except ValidationError:
        return rpc_error_body(INVALID_REQUEST, NOT_A_MESSAGE)
    return None


async def mcp_gate(scope: dict[str, Any], receive: Any, send: Any) -> tuple[Caller, Any] | None:
    """The request's caller and a ``receive`` that gives the SDK the body read here; None when
    the request was refused (and answered) or its client went away."""
    refusal = _place_refusal(scope)
    if refusal is not None:
        status, message, headers = refusal
        await _refuse(send, status, message, headers)
        return None
    caller = await _admitted(scope, send)
    if caller is None:
        return None
    body = await _body(receive)
    if body is None:
        return None
    refused = _body_refusal(body)
    if refused is not None:
        await _answer(send, 400, refused)
        return None
    given = False

    async def replay() -> dict[str, Any]:
        nonlocal given
        if given:
            return await receive()  # after the body: the disconnect, when it comes
        given = True
        return {"type": "http.request", "body": body, "more_body": False}

    return caller, replay
