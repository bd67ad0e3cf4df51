from django.conf import settings
from django.db import connection
from django.http import HttpRequest
from ninja import Query, Router, Status

from talorys import search, selectors, services
from talorys.models import OwnerSettings
from talorys.schemas import (
    HealthOut,
    SearchOut,
    SearchQuery,
    SettingsOut,
    SettingsPatch,
    UsageOut,
)
from talorys.security import request_by_token

health_router = Router(tags=["system"])
search_router = Router(tags=["search"])
settings_router = Router(tags=["settings"])
usage_router = Router(tags=["usage"])


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


def _settings_out(row: OwnerSettings) -> SettingsOut:
    # Everything stored except the keys (SettingsOut has no field for them), plus what is derived.
    stored = {name: getattr(row, name) for name in SettingsOut.model_fields if hasattr(row, name)}
    return SettingsOut(
        **stored,
        provider=selectors.model_provider_kind(owner_settings=row),
        embeddings_provider=selectors.embeddings_provider_kind(owner_settings=row),
        model_api_key_set=bool(row.model_api_key),
        embeddings_api_key_set=bool(row.embeddings_api_key),
    )


@settings_router.get("", response=SettingsOut)
def settings_get(request: HttpRequest) -> SettingsOut:
    return _settings_out(services.owner_settings_get())


@settings_router.patch("", response=SettingsOut)
def settings_update(request: HttpRequest, payload: SettingsPatch) -> SettingsOut:
    changes = payload.model_dump(exclude_unset=True)
    return _settings_out(
        services.owner_settings_update(by_token=request_by_token(request), **changes)
    )


@usage_router.get("", response=UsageOut)
def usage_get(request: HttpRequest) -> selectors.UsageReport:
    return selectors.usage_report(owner_settings=services.owner_settings_get())


@search_router.get("", response=SearchOut)
def search_all(request: HttpRequest, params: Query[SearchQuery]) -> SearchOut:
    kinds = [k.strip() for k in (params.kinds or "").split(",") if k.strip()] or None
    hits = search.search(q=params.q, kinds=kinds, limit=params.limit)
    return SearchOut(items=hits, count=len(hits))
