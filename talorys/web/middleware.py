"""Middleware: the API error envelope for every error (session lifetimes: talorys/accounts).

Under /v1/ (the OpenAI-compatible endpoint) the same errors take OpenAI's shape instead
(openai_errors.py): its clients read nothing else.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.core.exceptions import (
    BadRequest,
    PermissionDenied,
    RequestDataTooBig,
    SuspiciousOperation,
)
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.http.multipartparser import MultiPartParserError

from talorys.lib.errors import (
    ServiceUnavailable,
    classify_failure,
    code_for_status,
    error_body,
)
from talorys.web.openai_errors import is_openai_path, openai_error

log = logging.getLogger(__name__)

_MESSAGES = {
    400: "The request could not be understood.",
    401: "Log in first.",
    403: "You may not do that.",
    404: "Nothing is at this address.",
    405: "This address does not accept that method.",
    413: "The request is too large.",
    500: "Something went wrong on our side. It has been logged.",
}


_DJANGO_ANSWERS = (Http404, PermissionDenied, BadRequest, SuspiciousOperation)
# The largest id the database holds (a signed 64-bit integer in PostgreSQL and SQLite).
MAX_ID = 2**63 - 1


def _is_api(request: HttpRequest) -> bool:
    return request.path.startswith("/api/") or is_openai_path(request.path)


def _error_response(request: HttpRequest, status: int, message: str) -> JsonResponse:
    """An error answer under /api/ (the envelope) or /v1/ (OpenAI's shape)."""
    if is_openai_path(request.path):
        return JsonResponse(openai_error(status, message), status=status)
    return JsonResponse(error_body(code_for_status(status), message), status=status)


def unavailable_response(request: HttpRequest, error: ServiceUnavailable) -> HttpResponse:
    """503 with Retry-After: the envelope under /api/, plain text elsewhere."""
    if _is_api(request):
        response: HttpResponse = _error_response(request, error.status, error.message)
    else:
        response = HttpResponse(error.message, status=error.status, content_type="text/plain")
    return error.retry_after_header(response)


class ApiErrorEnvelopeMiddleware:
    """Under /api/, every error answer is the JSON envelope: never an HTML page or a traceback.

    django-ninja already answers its own errors in the envelope (config/api.py); this catches what
    happens outside it: unknown paths (404), wrong methods (405), CSRF failures and crashes (500).
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if not _is_api(request) or response.status_code < 400:
            return response
        if response.get("Content-Type", "").startswith(("application/json", "text/event-stream")):
            return response
        status = response.status_code
        wrapped = _error_response(request, status, _MESSAGES.get(status, "The request failed."))
        # Keep what the inner middleware added: security headers, Allow, cookies.
        for name, value in response.items():
            if name.lower() not in ("content-type", "content-length"):
                wrapped[name] = value
        wrapped.cookies = response.cookies
        return wrapped

    def process_view(
        self, request: HttpRequest, view_func: Callable, view_args: tuple, view_kwargs: dict
    ) -> HttpResponse | None:
        # A path id ({int:...}) past what the database can hold names nothing; passed on, it
        # would fail inside the query (SQLite: "Python int too large"). Every id, every route.
        if any(isinstance(value, int) and value > MAX_ID for value in view_kwargs.values()):
            if _is_api(request):
                return _error_response(request, 404, _MESSAGES[404])
            raise Http404
        return None

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if _is_api(request) and isinstance(exception, RequestDataTooBig):
            return _error_response(request, 413, _MESSAGES[413])
        if _is_api(request) and isinstance(exception, MultiPartParserError):
            return _error_response(request, 400, "The multipart/form-data body could not be read.")
        # No database connection to be had (pool exhausted): load, so 503, never 500.
        failure = classify_failure(exception, message=_MESSAGES[500])
        if isinstance(failure, ServiceUnavailable):
            log.warning("%s %s: %s", request.method, request.path, failure.message)
            return unavailable_response(request, failure)
        # Django answers these itself (404, 403, 400); __call__ then wraps that answer.
        if not _is_api(request) or isinstance(exception, _DJANGO_ANSWERS):
            return None
        log.exception("Unhandled error on %s %s", request.method, request.path)
        return _error_response(request, failure.status, failure.message)


def api_csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """CSRF_FAILURE_VIEW: JSON under /api/ and /v1/, Django's page elsewhere."""
    if _is_api(request):
        message = f"CSRF check failed ({reason}): send the X-CSRFToken header."
        return _error_response(request, 403, message)
    from django.views.csrf import csrf_failure

    return csrf_failure(request, reason=reason)
