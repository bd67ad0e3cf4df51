"""The owner's tasks: create, change, complete, bin and restore."""

from __future__ import annotations

import datetime as dt
from typing import Any, TypedDict, Unpack

from django.db import transaction
from django.utils import timezone

from talorys.history.bin import bin_move_in, bin_move_out
from talorys.history.kinds import ItemKind, item_fields, register_kind
from talorys.lib.actors import OWNER, Actor
from talorys.lib.errors import NotFound, ValidationFailed
from talorys.lib.updates import model_update
from talorys.lib.validation import clean_line, clean_text
from talorys.workspace.models import Project, Task
from talorys.workspace.services.common import aware, check_version, record_created, record_updated
from talorys.workspace.services.projects import project_ref

PRIORITY_TEXT = "priority must be 1 (low), 2 (normal) or 3 (high)."


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
            title=clean_line(title, field="title", max_length=Task.TITLE_MAX),
            details=clean_text(
                details, field="details", max_length=Task.DETAILS_MAX, required=False
            ),
            priority=priority,
            due_at=aware(due_at, field="due_at"),
            project=project,
        )
        record_created(TASK, task, actor)
    return task


class TaskChanges(TypedDict, total=False):
    """What task_update may change; a field left out keeps its value."""

    title: str
    details: str | None
    priority: int
    due_at: dt.datetime | None
    project_id: int | None
    status: str


# The columns task_update writes: the changes (a project by its row), what follows the status,
# and the version every edit counts.
_TASK_COLUMNS = (
    "title",
    "details",
    "priority",
    "due_at",
    "project",
    "status",
    "completed_at",
    "version",
)


def _task_clean(changes: TaskChanges) -> dict[str, object]:
    """The sent fields, checked in the order the owner's form lists them."""
    data: dict[str, object] = {}
    if "title" in changes:
        data["title"] = clean_line(changes["title"], field="title", max_length=Task.TITLE_MAX)
    if "details" in changes:
        data["details"] = clean_text(
            changes["details"] or "", field="details", max_length=Task.DETAILS_MAX, required=False
        )
    if "priority" in changes:
        if changes["priority"] not in Task.Priority.values:
            raise ValidationFailed(PRIORITY_TEXT)
        data["priority"] = changes["priority"]
    if "due_at" in changes:
        data["due_at"] = aware(changes["due_at"], field="due_at")
    if "project_id" in changes:
        data["project"] = project_ref(changes["project_id"])
    if "status" in changes:
        if changes["status"] not in Task.Status.values:
            raise ValidationFailed("status must be 'open' or 'done'.")
        data["status"] = changes["status"]
    return data


def task_update(
    *,
    task_id: int,
    actor: Actor = OWNER,
    version: int | None = None,
    **changes: Unpack[TaskChanges],
) -> Task:
    """Apply the given fields. ``status`` moves completed_at with it. ``version``: the one the
    caller read; a task changed since is refused (Conflict). Every call counts as an edit (a
    new version and a change log entry), even one that changes nothing."""
    with transaction.atomic():
        task = Task.objects.live().select_for_update().filter(pk=task_id).first()
        if task is None:
            raise NotFound(f"Task {task_id} does not exist.")
        check_version(task, version, noun="task")
        before = item_fields(TASK, task)
        data = _task_clean(changes) | {"version": task.version + 1}
        if "status" in data and data["status"] != task.status:
            data["completed_at"] = timezone.now() if data["status"] == Task.Status.DONE else None
        model_update(instance=task, fields=_TASK_COLUMNS, data=data)
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
