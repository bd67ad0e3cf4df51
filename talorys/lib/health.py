"""/api/health: public; the database and (when configured) the broker answer."""

from django.conf import settings
from django.db import connection
from django.http import HttpRequest
from ninja import Router, Schema, Status


class HealthOut(Schema):
    status: str
    database: str
    broker: str
    version: str


health_router = Router(tags=["system"])


@health_router.get("/health", auth=None, response={200: HealthOut, 503: HealthOut})
def health(request: HttpRequest):
    database = "ok"
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception:
        database = "unavailable"
    broker = "embedded"
    if settings.REDIS_URL:
        import redis

        try:
            redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2).ping()
            broker = "ok"
        except Exception:
            broker = "unavailable"
    healthy = database == "ok" and broker != "unavailable"
    body = HealthOut(
        status="ok" if healthy else "degraded", database=database, broker=broker, version="1"
    )
    return Status(200 if healthy else 503, body)
