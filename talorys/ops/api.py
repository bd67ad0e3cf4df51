"""/api/health: public; what talorys/ops/health.py reports, in one JSON object."""

from __future__ import annotations

from django.http import HttpRequest
from ninja import Router, Schema, Status

from talorys.ops.health import health_report


class HealthOut(Schema):
    status: str  # ok | degraded
    database: str  # ok | unavailable
    broker: str  # ok | embedded | unavailable
    channel_layer: str  # ok | embedded | unavailable
    worker: str  # ok | stale | unknown
    beat: str  # ok | stale | unknown
    setup: str  # the last setup run: ok | failed | unknown
    version: str


health_router = Router(tags=["system"])


@health_router.get("/health", auth=None, response={200: HealthOut, 503: HealthOut})
def health(request: HttpRequest):
    report = health_report()
    body = HealthOut(
        status=report.status,
        database=report.database,
        broker=report.broker,
        channel_layer=report.channel_layer,
        worker=report.worker.status,
        beat=report.beat.status,
        setup=report.setup,
        version=report.version,
    )
    # 503 only without a database: the container's health check restarts nothing else, and a
    # stopped worker must not take the pages down with it.
    return Status(503 if report.database != "ok" else 200, body)
