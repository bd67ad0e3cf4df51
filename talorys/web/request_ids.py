"""A request id for every HTTP request: on its log lines (talorys/lib/logs.py) and on its answer.

First in MIDDLEWARE, so every later middleware's log lines carry it too. A proxy's
``X-Request-ID`` is kept when it is a sane one (so the proxy's log and ours can be joined);
anything else (too long, a newline, spaces, quotes) is replaced by a fresh id, never echoed.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.core.signals import request_finished
from django.http import HttpRequest, HttpResponse

from talorys.lib import logs

HEADER = "X-Request-ID"
MAX_LENGTH = 128
# Letters, digits and a few separators: what proxies generate (hex, UUIDs, "1-5f2b-..."), and
# nothing that could split a log line or a header.
_SANE = re.compile(rf"[A-Za-z0-9._:-]{{1,{MAX_LENGTH}}}")


def request_id_for(incoming: str | None) -> str:
    """The incoming id when it is sane, else a new one (32 hex digits)."""
    if incoming and _SANE.fullmatch(incoming):
        return incoming
    return uuid.uuid4().hex


def _forget(**_: Any) -> None:
    logs.request_id.set("")


# When the response is closed (its body fully sent, a streamed one too): the lines Django logs
# after the middleware returned ("Not Found: /x") and those of a streamed body (the chat's SSE)
# still carry the id; nothing logged after the request does. dispatch_uid: connected once.
request_finished.connect(_forget, dispatch_uid="talorys.request_ids.forget")


class RequestIdMiddleware:
    """Sets the request id for the request's log lines and answers it in ``X-Request-ID``."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        self.get_response = get_response
        self._async = iscoroutinefunction(get_response)
        if self._async:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> Any:
        if self._async:
            return self._acall(request)
        value = self._start(request)
        response: HttpResponse = self.get_response(request)
        response[HEADER] = value
        return response

    async def _acall(self, request: HttpRequest) -> HttpResponse:
        value = self._start(request)
        get_response: Callable[[HttpRequest], Awaitable[HttpResponse]] = self.get_response
        response = await get_response(request)
        response[HEADER] = value
        return response

    @staticmethod
    def _start(request: HttpRequest) -> str:
        # Set, not scoped to this call: see request_finished above. Under ASGI each request
        # runs in a task of its own, whose context ends with it.
        value = request_id_for(request.headers.get(HEADER))
        logs.request_id.set(value)
        request.request_id = value  # type: ignore[attr-defined]
        return value
