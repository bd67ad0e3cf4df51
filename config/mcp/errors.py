"""What an MCP client reads when a request fails: always one of our messages, never Python's.

The SDK answers a handler's exception that is not its own ``MCPError`` with ``str(exc)`` as the
JSON-RPC error's message, and a body it cannot validate with pydantic's whole report (which
names its internals and links errors.pydantic.dev). So the transport checks the body first
(config/mcp/gate.py), and every handler's exception becomes one of these (config/mcp/server.py):
an ``AppError`` keeps its message and code (the code in the error's ``data``), anything else is
logged here and the client reads ``INTERNAL_MESSAGE`` (or that the database is busy: 503's
message, which is the server's state, not a bug).
"""

from __future__ import annotations

import json
from typing import Any

from talorys.lib.errors import AppError, RateLimited, ServiceUnavailable

# JSON-RPC 2.0's codes (the SDK's mcp_types has them too; here so that the transport's checks do
# not load the SDK), and the range it leaves to a server for its own errors.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INTERNAL_ERROR = -32603
APP_ERROR = -32000  # one of ours: ``data.code`` names which (RATE_LIMITED, NOT_FOUND...)

INTERNAL_MESSAGE = "The request failed on the server (it is in the server's log). Try again later."


def app_error_data(exc: AppError) -> dict[str, Any]:
    """The error's ``data``: our code, and when to try again for a refusal that says so."""
    data: dict[str, Any] = {"code": exc.code}
    if isinstance(exc, RateLimited | ServiceUnavailable):
        data["retry_after"] = exc.retry_after
    return data


def rpc_error_body(code: int, message: str, data: Any = None) -> bytes:
    """A JSON-RPC error without a request id, as a transport answers before reading the request
    (a client takes it for the request it sent)."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return json.dumps({"jsonrpc": "2.0", "id": None, "error": error}).encode()
