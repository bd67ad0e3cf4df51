"""The owner's tasks: create, change, complete, bin and restore."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.db import transaction
from django.utils import timezone

from talorys.history.bin import bin_move_in, bin_move_out
from talorys.history.kinds import ItemKind, item_fields, register_kind
from talorys.lib.actors import OWNER, Actor
from talorys.lib.errors import NotFound, ValidationFailed
from talorys.lib.validation import clean_text
from talorys.workspace.models import Project, Task
from talorys.workspace.services.common import aware, check_version, record_created, record_updated
from talorys.workspace.services.projects import project_ref

PRIORITY_TEXT = "priority must be 1 (low), 2 (normal) or 3 (high)."


def task_get(*, task_id: int) -> Task:
    task = Task.objects.live().select_related("project").filter(pk=task_id).first()
    if task is None:
        raise NotFound(f"Task {task_id} does not exist.")
    return task


def task_create(
    *,
    title: str,
    details: str = "",
    priority: int = Task.Priority.NORMAL,
    due_at: dt.datetime | None = None,
    project_id: int | None = None,
    actor: Actor = OWNER,
) -> Task:
    if priority not in Task.Priority.values:
        raise ValidationFailed(PRIORITY_TEXT)
    project = project_ref(project_id)
    with transaction.atomic():
        task = Task.objects.create(
            title=clean_text(title, field="title", max_length=Task.TITLE_MAX),
            details=clean_text(
                details, field="details", max_length=Task.DETAILS_MAX, required=False
            ),
            priority=priority,
            due_at=aware(due_at, field="due_at"),
            project=project,
        )
        record_created(TASK, task, actor)
    return task


def task_update(
    *, task_id: int, actor: Actor = OWNER, version: int | None = None, **changes: Any
) -> Task:
    """Apply the given fields. ``status`` moves completed_at with it. ``version``: the one the
    caller read; a task changed since is refused (Conflict)."""
    with transaction.atomic():
        task = Task.objects.live().select_for_update().filter(pk=task_id).first()
        if task is None:
            raise NotFound(f"Task {task_id} does not exist.")
        check_version(task, version, noun="task")
        before = item_fields(TASK, task)
        if "title" in changes:
            task.title = clean_text(changes["title"], field="title", max_length=Task.TITLE_MAX)
        if "details" in changes:
            task.details = clean_text(
                changes["details"] or "",
                field="details",
                max_length=Task.DETAILS_MAX,
                required=False,
            )
        if "priority" in changes:
            if changes["priority"] not in Task.Priority.values:
                raise ValidationFailed(PRIORITY_TEXT)
            task.priority = changes["priority"]
        if "due_at" in changes:
            task.due_at = aware(changes["due_at"], field="due_at")
        if "project_id" in changes:
            task.project = project_ref(changes["project_id"])
        if "status" in changes:
            status = changes["status"]
            if status not in Task.Status.values:
                raise ValidationFailed("status must be 'open' or 'done'.")
            if status != task.status:
                task.status = status
                task.completed_at = timezone.now() if status == Task.Status.DONE else None
        task.version += 1
        task.save()
        record_updated(TASK, task, before, actor)
    return task


def task_complete(*, task_id: int, actor: Actor = OWNER) -> Task:
    return task_update(task_id=task_id, status=Task.Status.DONE, actor=actor)


def task_delete(*, task_id: int, actor: Actor = OWNER) -> None:
    """To the bin, restorable for BIN_RETENTION."""
    bin_move_in(TASK, task_id, actor)


def task_restore(*, task_id: int, actor: Actor = OWNER) -> None:
    """Out of the bin, as it was."""
    bin_move_out(TASK, task_id, actor)


def _task_apply(*, pk: int, values: dict[str, Any], actor: Actor) -> None:
    values = dict(values)
    if values.get("due_at"):
        values["due_at"] = dt.datetime.fromisoformat(values["due_at"])
    if (
        values.get("project_id") is not None
        and not Project.objects.live().filter(pk=values["project_id"]).exists()
    ):
        values["project_id"] = None  # its project is in the bin or gone: keep the task free
    task_update(task_id=pk, actor=actor, **values)


TASK = ItemKind(
    name="task",
    model=Task,
    fields=("title", "details", "status", "priority", "due_at", "project_id"),
    title=lambda task: task.title,
    restore=lambda *, pk, actor, change: task_restore(task_id=pk, actor=actor),
    delete=lambda *, pk, actor: task_delete(task_id=pk, actor=actor),
    apply=_task_apply,
)
register_kind(TASK)
