"""The error shape of the OpenAI-compatible endpoint (/v1/, agent/completions/).

Clients of the OpenAI API (its official SDKs, Open WebUI, LibreChat) read an error answer as
``{"error": {"message", "type", "param", "code"}}`` and pick the exception they raise by its
HTTP status; Talorys's own envelope (``{"error": {"code", "message"}}``, errors.py) would reach
them as an unreadable failure. Everything that answers under /v1/ with an error, the body limit
(bodies.py) and the error middleware (middleware.py) included, builds it here.
"""

from __future__ import annotations

from typing import Any

OPENAI_PREFIX = "/v1/"

# The ``type`` OpenAI gives each status; a status not listed is a client's or the server's error.
_TYPES = {
    401: "invalid_request_error",
    403: "permission_error",
    404: "invalid_request_error",
    409: "conflict_error",
    413: "invalid_request_error",
    429: "rate_limit_error",
}
_CODES = {
    401: "invalid_api_key",
    403: "permission_denied",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "request_too_large",
    429: "rate_limit_exceeded",
    503: "service_unavailable",
}


def is_openai_path(path: str) -> bool:
    return path.startswith(OPENAI_PREFIX)


def openai_error(
    status: int,
    message: str,
    *,
    code: str | None = None,
    param: str | None = None,
    type_: str | None = None,
) -> dict[str, Any]:
    """The body of an error answer with this HTTP status, as OpenAI shapes it."""
    kind = type_ or _TYPES.get(status, "invalid_request_error" if status < 500 else "server_error")
    return {
        "error": {
            "message": message,
            "type": kind,
            "param": param,
            "code": code
            or _CODES.get(status, "invalid_request" if status < 500 else "server_error"),
        }
    }
