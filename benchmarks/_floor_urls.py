"""Talorys's URLs plus the floor of benchmarks/api_throughput.py: ``/api/floor/tasks``, a bare
Django view answering the same JSON as ``GET /api/tasks?limit=50``.

The view computes its payload once, through the real selector and schema, and then only hands
it to ``JsonResponse``: what is left is Django itself (the same middleware, the same session
read, the same JSON encoding) in the same server, which is what the API is compared with.

It sits under /api/ because the middleware treats /api/ differently (the owner's time zone is
read for every other signed-in path): elsewhere the floor would pay a query the API does not.
It requires no login; the benchmark sends the owner's cookies to both, so the session and user
are read for both.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, JsonResponse
from django.urls import path

import config.urls
from talorys.workspace import selectors
from talorys.workspace.schemas import TaskOut

LIMIT = 50
# Sync views run on one thread under ASGI (thread_sensitive), so filling it once is race-free.
_payload: dict[str, Any] | None = None


def bare_tasks(request: HttpRequest) -> JsonResponse:
    global _payload
    if _payload is None:
        tasks = selectors.task_list()
        # Python-mode dumps, as ninja makes them, so JsonResponse's DjangoJSONEncoder (ninja's
        # encoder is a subclass) writes the datetimes exactly as the API does, on every request.
        _payload = {
            "items": [TaskOut.from_orm(task).model_dump() for task in tasks[:LIMIT]],
            "count": tasks.count(),
        }
    return JsonResponse(_payload)


urlpatterns = [path("api/floor/tasks", bare_tasks), *config.urls.urlpatterns]
