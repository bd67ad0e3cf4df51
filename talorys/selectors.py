"""Reads of the owner's core data used by several callers (API, pages, tools)."""

from __future__ import annotations

import datetime as dt

from django.db.models import Q, QuerySet

from talorys.models import Note, Notification, Project, Task


def task_list(
    *,
    status: str | None = None,
    project_id: int | None = None,
    due_before: dt.datetime | None = None,
    due_after: dt.datetime | None = None,
    q: str | None = None,
) -> QuerySet[Task]:
    tasks = Task.objects.live().select_related("project")
    if status:
        tasks = tasks.filter(status=status)
    if project_id is not None:
        tasks = tasks.filter(project_id=project_id)
    if due_before is not None:
        tasks = tasks.filter(due_at__lt=due_before)
    if due_after is not None:
        tasks = tasks.filter(due_at__gte=due_after)
    if q:
        tasks = tasks.filter(Q(title__icontains=q) | Q(details__icontains=q))
    return tasks


def project_list(*, q: str | None = None) -> QuerySet[Project]:
    projects = Project.objects.live()
    if q:
        projects = projects.filter(Q(name__icontains=q) | Q(description__icontains=q))
    return projects


def note_list(*, q: str | None = None) -> QuerySet[Note]:
    notes = Note.objects.live()
    if q:
        notes = notes.filter(Q(title__icontains=q) | Q(content__icontains=q))
    return notes


def notification_list(*, unread: bool | None = None) -> QuerySet[Notification]:
    notifications = Notification.objects.all()
    if unread is True:
        notifications = notifications.filter(read_at__isnull=True)
    elif unread is False:
        notifications = notifications.filter(read_at__isnull=False)
    return notifications
