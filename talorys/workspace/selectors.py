"""Reads of the owner's core data used by several callers (API, pages, tools)."""

from __future__ import annotations

import datetime as dt
from typing import Literal, get_args
from zoneinfo import ZoneInfo

from django.db.models import Count, Q, QuerySet
from django.db.models.functions import Substr
from django.utils import timezone

from talorys.lib.errors import NotFound, ValidationFailed
from talorys.lib.search import SNIPPET_CHARS
from talorys.workspace.models import Note, Project, Task


def project_get(*, project_id: int) -> Project:
    project = Project.objects.live().filter(pk=project_id).first()
    if project is None:
        raise NotFound(f"Project {project_id} does not exist.")
    return project


def task_get(*, task_id: int) -> Task:
    task = Task.objects.live().select_related("project").filter(pk=task_id).first()
    if task is None:
        raise NotFound(f"Task {task_id} does not exist.")
    return task


def note_get(*, note_id: int) -> Note:
    note = Note.objects.live().filter(pk=note_id).first()
    if note is None:
        raise NotFound(f"Note {note_id} does not exist.")
    return note


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
