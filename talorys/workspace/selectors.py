"""Reads of the owner's core data used by several callers (API, pages, tools)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Literal, TypedDict, get_args
from zoneinfo import ZoneInfo

from django.conf import settings
from django.db.models import Count, Exists, Max, OuterRef, Q, QuerySet
from django.db.models.functions import Substr
from django.utils import timezone

from talorys.lib.errors import ValidationFailed
from talorys.lib.search import SNIPPET_CHARS
from talorys.providers import local_embedding
from talorys.providers.base import ProviderConfig
from talorys.workspace.history import CHANGE_LOG_SOURCES
from talorys.workspace.models import Change, Note, OwnerSettings, Project, Task, UsageDay

# The named due filters (the tasks page, /api/tasks?due=), read in the owner's zone.
TaskDue = Literal["overdue", "today", "week", "none"]
TASK_DUE_LABELS: dict[TaskDue, str] = {
    "overdue": "Overdue",
    "today": "Due today",
    "week": "Due this week",
    "none": "No due date",
}


def _due_filter(due: str, zone: ZoneInfo) -> Q:
    """Overdue: open and due before now. Today: the owner's calendar day. Week: Monday to
    Sunday of the owner's current week (overdue ones of it included)."""
    if due not in get_args(TaskDue):
        raise ValidationFailed(f"due must be one of {', '.join(get_args(TaskDue))}.")
    now = timezone.now()
    if due == "none":
        return Q(due_at__isnull=True)
    if due == "overdue":
        return Q(due_at__lt=now, status=Task.Status.OPEN)
    today = timezone.localtime(now, zone).date()
    first = today if due == "today" else today - dt.timedelta(days=today.weekday())
    after = first + dt.timedelta(days=1 if due == "today" else 7)
    # Midnight in the zone, read as schedules read wall times (fold=0).
    start, end = (dt.datetime.combine(day, dt.time(), tzinfo=zone) for day in (first, after))
    return Q(due_at__gte=start, due_at__lt=end)


def task_list(
    *,
    status: str | None = None,
    project_id: int | None = None,
    due_before: dt.datetime | None = None,
    due_after: dt.datetime | None = None,
    q: str | None = None,
    due: str | None = None,
    zone: ZoneInfo = ZoneInfo("UTC"),
) -> QuerySet[Task]:
    """``due`` is one of TaskDue, its days read in ``zone`` (the owner's)."""
    tasks = Task.objects.live().select_related("project")
    if status:
        tasks = tasks.filter(status=status)
    if project_id is not None:
        tasks = tasks.filter(project_id=project_id)
    if due_before is not None:
        tasks = tasks.filter(due_at__lt=due_before)
    if due_after is not None:
        tasks = tasks.filter(due_at__gte=due_after)
    if due:
        tasks = tasks.filter(_due_filter(due, zone))
    if q:
        tasks = tasks.filter(Q(title__icontains=q) | Q(details__icontains=q))
    return tasks


def project_list(*, q: str | None = None, with_task_counts: bool = False) -> QuerySet[Project]:
    """``with_task_counts``: each project's live tasks (``task_count``) and open ones
    (``open_count``), counted in the same query."""
    projects: QuerySet[Project] = Project.objects.live()
    if q:
        projects = projects.filter(Q(name__icontains=q) | Q(description__icontains=q))
    if with_task_counts:
        live = Q(tasks__deleted_at__isnull=True)
        projects = projects.annotate(
            task_count=Count("tasks", filter=live),
            open_count=Count("tasks", filter=live & Q(tasks__status=Task.Status.OPEN)),
        ).order_by(*(Project._meta.ordering or ()))  # a GROUP BY drops the model's ordering
    return projects


def note_list(*, q: str | None = None, previews: bool = False) -> QuerySet[Note]:
    """``previews``: the content is left unread but its start (``preview``), enough for a
    snippet: a page of long notes reads a few hundred characters of each, not all of it."""
    notes: QuerySet[Note] = Note.objects.live()
    if q:
        notes = notes.filter(Q(title__icontains=q) | Q(content__icontains=q))
    if previews:
        notes = notes.defer("content").annotate(preview=Substr("content", 1, SNIPPET_CHARS * 2))
    return notes


def changed_since(*, kinds: list[str], since: dt.datetime) -> dict[str, dict[int, dt.datetime]]:
    """Per kind ("task", as the change log names it), the items with a change recorded since
    ``since`` (made, edited, binned or restored by any service) and their latest change's time:
    the recall index's lazy pass re-reads those whose entry is older. One query."""
    changed: dict[str, dict[int, dt.datetime]] = {kind: {} for kind in kinds}
    rows = (
        Change.objects.filter(kind__in=kinds, created_at__gte=since)
        .values("kind", "object_id")
        .annotate(last=Max("created_at"))
        .values_list("kind", "object_id", "last")
    )
    for kind, object_id, last in rows:
        changed[kind][object_id] = last
    return changed


def change_list(
    *,
    by_model: bool = True,
    message_ids: list[int] | None = None,
    kind: str | None = None,
    object_id: int | None = None,
) -> QuerySet[Change]:
    """Revisions, newest first, each marked ``reverted`` when a revert points at it. By default
    only what the model changed (in chat or a scheduled run) and what an import changed; ``message_ids`` keeps the changes
    those replies made; ``kind`` and ``object_id`` one item's history."""
    changes = Change.objects.annotate(
        reverted=Exists(Change.objects.filter(reverts=OuterRef("pk")))
    ).order_by("-id")
    if by_model:
        changes = changes.filter(CHANGE_LOG_SOURCES)
    if message_ids is not None:
        changes = changes.filter(message_id__in=message_ids)
    if kind is not None:
        changes = changes.filter(kind=kind)
    if object_id is not None:
        changes = changes.filter(object_id=object_id)
    return changes


# --- model endpoints ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ModelEndpoint:
    base_url: str
    model: str
    api_key: str = field(repr=False)  # kept out of logs and tracebacks


def _endpoint(
    *, url: str, model: str, key: str, env_url: str, env_model: str, env_key: str
) -> ModelEndpoint:
    base_url = url or env_url
    # The environment's key belongs to the environment's server: never send it to another one.
    api_key = key or (env_key if base_url == env_url else "")
    return ModelEndpoint(base_url=base_url, model=model or env_model, api_key=api_key)


def model_endpoint(*, owner_settings: OwnerSettings) -> ModelEndpoint:
    """The chat model to use: owner settings override the environment, field by field."""
    return _endpoint(
        url=owner_settings.model_base_url,
        model=owner_settings.model_name,
        key=owner_settings.model_api_key,
        env_url=settings.TALORYS_MODEL_BASE_URL,
        env_model=settings.TALORYS_MODEL,
        env_key=settings.TALORYS_MODEL_API_KEY,
    )


def embeddings_endpoint(*, owner_settings: OwnerSettings) -> ModelEndpoint:
    """The embeddings server to use, chosen like ``model_endpoint``."""
    return _endpoint(
        url=owner_settings.embeddings_base_url,
        model=owner_settings.embeddings_model,
        key=owner_settings.embeddings_api_key,
        env_url=settings.TALORYS_EMBEDDINGS_BASE_URL,
        env_model=settings.TALORYS_EMBEDDINGS_MODEL,
        env_key=settings.TALORYS_EMBEDDINGS_API_KEY,
    )


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
    local one when its extra is installed, else none (recall is keyword only)."""
    endpoint = embeddings_endpoint(owner_settings=owner_settings)
    if endpoint.base_url and endpoint.model:
        return "openai-compatible"
    return "local" if local_embedding.available() else "none"


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


class UsageReport(TypedDict):
    today: UsageDay
    limits: dict[str, int]  # keyed by UsageDay counter
    remaining: dict[str, int]
    days: list[UsageDay]  # newest first, one per UTC day, zeros where nothing was spent


def usage_report(*, owner_settings: OwnerSettings, days: int = 30) -> UsageReport:
    """Today's counters against the owner's limits, and the last ``days`` UTC days.

    A pure read: days without a row are shown as unsaved zero rows.
    """
    today = timezone.now().date()
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
    """The model choice for a turn (see talorys.workspace.selectors.model_endpoint for the rule)."""
    endpoint = model_endpoint(owner_settings=owner_settings)
    return ProviderConfig(
        base_url=endpoint.base_url, model=endpoint.model, api_key=endpoint.api_key
    )
