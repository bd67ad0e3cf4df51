"""Reads of the owner's settings: the row itself (and this process's copy of it), the owner's
time zone, which model server and embedder answer (the owner's settings override the
environment, field by field), what recall is now, and the day's usage report."""

from __future__ import annotations

import copy
import dataclasses
import datetime as dt
import hashlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict
from zoneinfo import ZoneInfo

from django.conf import settings
from django.core.cache import cache
from django.db import IntegrityError, transaction
from django.utils import timezone
from redis.exceptions import RedisError

from talorys.embedder import model_files
from talorys.owner.models import OwnerSettings, UsageDay
from talorys.providers.base import ProviderConfig, ProviderError
from talorys.providers.model_list import listed_models


def owner_settings_get() -> OwnerSettings:
    """The settings row. A fresh install (or a database a test flushed) has none yet: the
    first read makes it with the defaults, once, which is what every later read would see
    anyway; after that this only reads."""
    settings_row = OwnerSettings.objects.filter(pk=1).first()
    if settings_row is None:
        try:
            with transaction.atomic():
                settings_row = OwnerSettings.objects.create(pk=1)
        except IntegrityError:  # made by a concurrent request
            settings_row = OwnerSettings.objects.get(pk=1)
    return settings_row


# This process's copy of the row, kept by owner_settings_current under its version.
_kept: OwnerSettings | None = None
_kept_lock = threading.Lock()


def owner_settings_current(*, version: int | None) -> OwnerSettings:
    """The settings row, as ``owner_settings_get`` reads it, from this process's copy when
    ``version`` (read by the caller in a statement it makes anyway: agent/runner/opening.py)
    is the copy's; else read, and kept. ``None``: no row was found (made here).

    Every write of the row changes its version (OwnerSettings.save; the ``update()`` writes
    and the backup import set it too), so a copy under the version just read is the row. Each
    caller gets a copy of its own to read or change."""
    global _kept
    with _kept_lock:
        kept = _kept
    if kept is not None and version is not None and kept.version == version:
        return copy.copy(kept)
    row = owner_settings_get()
    with _kept_lock:
        _kept = copy.copy(row)
    return row


def owner_settings_kept() -> OwnerSettings | None:
    """This process's copy of the settings as last read (``owner_settings_current``), without
    reading: None before the first read. For guesses made before any read, which must cost no
    statement (memory.embeddings.query_prefetch at a turn's claim); never for a decision."""
    with _kept_lock:
        return copy.copy(_kept) if _kept is not None else None


def owner_zone() -> ZoneInfo:
    """The owner's time zone, in which schedules run and times are shown to the model."""
    return ZoneInfo(owner_settings_get().time_zone)


@dataclass(frozen=True)
class ModelEndpoint:
    base_url: str
    model: str
    api_key: str = field(repr=False)  # kept out of logs and tracebacks


def _endpoint(url: str, model: str, key: str, env: tuple[str, str, str]) -> ModelEndpoint:
    env_url, env_model, env_key = env
    base_url = url or env_url
    # The environment's key belongs to the environment's server: never send it to another one.
    api_key = key or (env_key if base_url == env_url else "")
    return ModelEndpoint(base_url=base_url, model=model or env_model, api_key=api_key)


def model_endpoint(*, owner_settings: OwnerSettings) -> ModelEndpoint:
    """The chat model to use: owner settings override the environment, field by field."""
    row = owner_settings
    env = (settings.TALORYS_MODEL_BASE_URL, settings.TALORYS_MODEL, settings.TALORYS_MODEL_API_KEY)
    return _endpoint(row.model_base_url, row.model_name, row.model_api_key, env)


def embeddings_endpoint(*, owner_settings: OwnerSettings) -> ModelEndpoint:
    """The embeddings server to use, chosen like ``model_endpoint``."""
    row = owner_settings
    env = (
        settings.TALORYS_EMBEDDINGS_BASE_URL,
        settings.TALORYS_EMBEDDINGS_MODEL,
        settings.TALORYS_EMBEDDINGS_API_KEY,
    )
    return _endpoint(row.embeddings_base_url, row.embeddings_model, row.embeddings_api_key, env)


# What runs the chat and the embeddings, as the settings page and API show it.
ModelProviderKind = Literal["demo", "openai-compatible"]
EmbeddingsProviderKind = Literal["none", "local", "openai-compatible"]
RecallMode = Literal["keyword", "hybrid"]


def model_provider_kind(*, owner_settings: OwnerSettings) -> ModelProviderKind:
    """Without both a server and a model name, chat runs on the built-in demo provider."""
    endpoint = model_endpoint(owner_settings=owner_settings)
    return "openai-compatible" if endpoint.base_url and endpoint.model else "demo"


def embeddings_provider_kind(*, owner_settings: OwnerSettings) -> EmbeddingsProviderKind:
    """The embedder semantic recall uses when it is on: a configured server first, else the
    local embedder process (its model files ship with every install), else none."""
    endpoint = embeddings_endpoint(owner_settings=owner_settings)
    if endpoint.base_url and endpoint.model:
        return "openai-compatible"
    return "local" if model_files.available() else "none"


def recall_mode(*, owner_settings: OwnerSettings) -> RecallMode:
    """Hybrid (keyword + vectors) when the owner turned semantic recall on and there is an
    embedder; keyword otherwise (memory/recall/)."""
    on = owner_settings.semantic_enabled
    return (
        "hybrid"
        if on and embeddings_provider_kind(owner_settings=owner_settings) != "none"
        else "keyword"
    )


# --- usage -------------------------------------------------------------------------------------

# kind -> (UsageDay counter, OwnerSettings daily limit)
USAGE_KINDS = {
    "ai": ("ai_requests", "daily_ai_requests"),
    "scheduled_ai": ("scheduled_ai_requests", "daily_scheduled_ai_requests"),
    "embedding": ("embedding_requests", "daily_embedding_requests"),
}


def usage_day(owner_settings: OwnerSettings, *, now: dt.datetime | None = None) -> dt.date:
    """The day a request counts on: the owner's local date at the time of use.

    The same day the pages show (the owner's zone), so a budget resets at the owner's midnight,
    not at UTC's. A stored day is never re-dated: after a zone change the days before it keep
    the dates they had, and the day of the change may be a little longer or shorter than 24 h.
    """
    return (now or timezone.now()).astimezone(ZoneInfo(owner_settings.time_zone)).date()


class UsageReport(TypedDict):
    today: UsageDay
    limits: dict[str, int]  # keyed by UsageDay counter
    remaining: dict[str, int]
    days: list[UsageDay]  # newest first, one per owner's day, zeros where nothing was spent


def usage_report(*, owner_settings: OwnerSettings, days: int = 30) -> UsageReport:
    """Today's counters against the owner's limits, and the last ``days`` days (the owner's
    local dates, as usage_day counts them).

    A pure read: days without a row are shown as unsaved zero rows.
    """
    today = usage_day(owner_settings)
    first = today - dt.timedelta(days=days - 1)
    saved = {row.day: row for row in UsageDay.objects.filter(day__gte=first, day__lte=today)}
    series = [
        saved.get(day) or UsageDay(day=day)
        for day in (today - dt.timedelta(days=n) for n in range(days))
    ]
    limits = {column: getattr(owner_settings, field) for column, field in USAGE_KINDS.values()}
    remaining = {
        column: max(0, limit - getattr(series[0], column)) for column, limit in limits.items()
    }
    return UsageReport(today=series[0], limits=limits, remaining=remaining, days=series)


def provider_config(owner_settings: OwnerSettings) -> ProviderConfig:
    """The model choice for a turn (see model_endpoint above for the rule)."""
    endpoint = model_endpoint(owner_settings=owner_settings)
    return ProviderConfig(
        base_url=endpoint.base_url, model=endpoint.model, api_key=endpoint.api_key
    )


def usage_remaining(*, kind: str, owner_settings: OwnerSettings | None = None) -> int:
    """Requests of ``kind`` still allowed today (the owner's settings read when not given)."""
    column, _limit_field = USAGE_KINDS[kind]
    owner_settings = owner_settings or owner_settings_get()
    return usage_report(owner_settings=owner_settings, days=1)["remaining"][column]


# --- the models to choose from -----------------------------------------------------------------

# How long the server's list is kept, and a failure to read it (shorter: it may come back soon).
MODEL_LIST_SECONDS = 300
MODEL_LIST_FAILED_SECONDS = 30
DEMO_MODEL = "demo"


@dataclass(frozen=True)
class ModelChoices:
    """The models a conversation may ask: the default first, then the rest the server lists.
    ``available`` is False when the list could not be read (``problem`` says why): then the
    default alone is offered."""

    default: str
    models: list[str]
    available: bool = True
    problem: str = ""


def model_choices(*, owner_settings: OwnerSettings) -> ModelChoices:
    """The models the configured server lists (its ``/models``), kept in the cache for
    MODEL_LIST_SECONDS per server and key; the demo lists its one model. Never raises: a
    server that cannot say leaves the default alone, kept for MODEL_LIST_FAILED_SECONDS."""
    config = provider_config(owner_settings)
    if config.is_demo:
        return ModelChoices(default=DEMO_MODEL, models=[DEMO_MODEL])
    key = (
        "model-list:" + hashlib.sha256(f"{config.base_url}\0{config.api_key}".encode()).hexdigest()
    )
    kept = _cached(lambda: cache.get(key))
    if kept is None:
        try:
            kept = {"models": listed_models(config), "problem": ""}
        except ProviderError as error:
            kept = {"models": [], "problem": f"{error.code}: {error.message}"}
        seconds = MODEL_LIST_FAILED_SECONDS if kept["problem"] else MODEL_LIST_SECONDS
        _cached(lambda: cache.set(key, kept, seconds))
    others = [model for model in kept["models"] if model != config.model]
    return ModelChoices(
        default=config.model,
        models=[config.model, *others],
        available=not kept["problem"],
        problem=kept["problem"],
    )


def _cached(operation: Callable[[], Any]) -> Any:
    """``operation`` on the cache, or None while Redis does not answer: the list is then read
    each time, and the picker still works."""
    try:
        return operation()
    except RedisError:
        return None


def conversation_provider(config: ProviderConfig, *, model: str) -> ProviderConfig:
    """``config`` asking ``model`` (a conversation's choice; "" keeps the default). The demo
    answers every conversation alike."""
    if config.is_demo or not model:
        return config
    return dataclasses.replace(config, model=model)
