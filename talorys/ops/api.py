"""/api/health: what talorys/ops/health.py reports. Anyone gets the status (and the HTTP status);
the owner's session or an API token gets every check and the version.

The wiring (config/api.py) mounts the router with the owner's auth first and ``anyone`` last, so
an anonymous caller (or one with a bad token) is let in as ``ANONYMOUS``: this app sits below
accounts and cannot name the owner's auth itself.
"""

from __future__ import annotations

import datetime as dt
import os

from django.http import HttpRequest
from ninja import Router, Schema, Status

from talorys.ops.health import health_report

ANONYMOUS = "anonymous"  # request.auth of a caller neither the session nor a token vouched for


def anyone(request: HttpRequest) -> str:
    """The last auth of the health route: whoever the others turned away, as ``ANONYMOUS``."""
    return ANONYMOUS


class HealthStatusOut(Schema):
    status: str  # ok | degraded


class ExitOut(Schema):
    code: int  # negative: killed by that signal (-9: SIGKILL)
    at: dt.datetime


class ProcessOut(Schema):
    """One of talorys_run's children (talorys/ops/supervisor.py)."""

    status: str  # running | restarting
    pid: int | None
    started_at: dt.datetime | None
    restarts: int  # since talorys_run started
    last_exit: ExitOut | None


class HealthOut(HealthStatusOut):
    database: str  # ok | unavailable
    broker: str  # ok | embedded | unavailable
    channel_layer: str  # ok | embedded | unavailable
    worker: str  # ok | stale | unknown
    beat: str  # ok | stale | unknown
    embedder: str  # ok | unavailable (semantic recall's model process; keyword recall meanwhile)
    embedder_error: str | None = None  # why it is unavailable
    setup: str  # the last setup run: ok | failed | unknown
    version: str
    # web, worker and beat as talorys_run keeps them; left out when something else runs them.
    processes: dict[str, ProcessOut] | None = None
    # The pid of the web process that answered: which of several (talorys/ops/web.py) it was.
    served_by: int


health_router = Router(tags=["system"])
_ANSWERS = HealthOut | HealthStatusOut


@health_router.get("/health", response={200: _ANSWERS, 503: _ANSWERS}, exclude_none=True)
def health(request: HttpRequest):
    report = health_report()
    # 503 only without a database: the container's health check restarts nothing else, and a
    # stopped worker must not take the pages down with it.
    status = 503 if report.database != "ok" else 200
    if getattr(request, "auth", ANONYMOUS) == ANONYMOUS:
        # Which version and parts run is for the owner: it tells an attacker what to try.
        return Status(status, HealthStatusOut(status=report.status))
    body = HealthOut(
        status=report.status,
        database=report.database,
        broker=report.broker,
        channel_layer=report.channel_layer,
        worker=report.worker.status,
        beat=report.beat.status,
        embedder=report.embedder,
        embedder_error=report.embedder_error or None,
        setup=report.setup,
        version=report.version,
        processes=report.processes,  # type: ignore[arg-type]  # pydantic makes ProcessOut of each
        served_by=os.getpid(),
    )
    return Status(status, body)
