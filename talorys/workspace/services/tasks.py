"""The owner's tasks: create, change, complete, bin and restore."""

from __future__ import annotations

import datetime as dt
from typing import Any, TypedDict, Unpack

from django.utils import timezone

from talorys.history.bin import bin_move_in, bin_move_out
from talorys.history.kinds import ItemKind, register_kind
from talorys.lib.actors import OWNER, Actor
from talorys.lib.errors import field_refused
from talorys.lib.when import Understood, task_read
from talorys.owner.selectors import owner_zone
from talorys.workspace.models import Project, Task
from talorys.workspace.services.common import aware, item_create, item_edit, item_texts
from talorys.workspace.services.projects import project_ref

PRIORITY_TEXT = "priority must be 1 (low), 2 (normal) or 3 (high)."


class TaskChanges(TypedDict, total=False):
    """What task_update may change; a field left out keeps its value."""

    title: str
    details: str | None
    priority: int
    due_at: dt.datetime | None
    project_id: int | None
    status: str


def _task_clean(changes: TaskChanges) -> dict[str, Any]:
    """The sent fields, checked in the order the owner's form lists them."""
    data = item_texts(changes, ("title", Task.TITLE_MAX), ("details", Task.DETAILS_MAX))
    if "priority" in changes:
        if changes["priority"] not in Task.Priority.values:
            raise field_refused(PRIORITY_TEXT, field="priority")
        data["priority"] = changes["priority"]
    if "due_at" in changes:
        data["due_at"] = aware(changes["due_at"], field="due_at")
    if "project_id" in changes:
        data["project"] = project_ref(changes["project_id"])
    if "status" in changes:
        if changes["status"] not in Task.Status.values:
            raise field_refused("status must be 'open' or 'done'.", field="status")
        data["status"] = changes["status"]
    return data


def task_create(
    *,
    title: str,
    details: str = "",
    priority: int = Task.Priority.NORMAL,
    due_at: dt.datetime | None = None,
    project_id: int | None = None,
    actor: Actor = OWNER,
) -> Task:
    fields = TaskChanges(
        title=title, details=details, priority=priority, due_at=due_at, project_id=project_id
    )
    return item_create(TASK, actor, _task_clean(fields))


def task_create_in_words(
    *, text: str, actor: Actor = OWNER, now: dt.datetime | None = None
) -> tuple[Task, Understood]:
    """A task typed in words ("pick up parcel friday 5pm"), read in the owner's zone by the
    reader the tasks page and the demo use (talorys/lib/when.py): the task, and what was read.
    Text that is empty or only a date is refused, and so is a repeating phrase: a task is due
    once (the tasks page's quick add makes a reminder routine of it)."""
    got = task_read(text, zone=owner_zone(), now=now, field="text")
    if got.schedule is not None:
        raise field_refused(
            f"“{got.words}” repeats, and a task is due once. Make a reminder routine instead: "
            "POST /api/automations, or type it in the tasks page's New task field.",
            field="text",
        )
    return task_create(title=got.title, due_at=got.due, actor=actor), got


def task_update(
    *,
    task_id: int,
    actor: Actor = OWNER,
    version: int | None = None,
    **changes: Unpack[TaskChanges],
) -> Task:
    """Apply the given fields. ``status`` moves completed_at with it."""

    def data(task: Task) -> dict[str, Any]:
        cleaned = _task_clean(changes)
        if "status" in cleaned and cleaned["status"] != task.status:
            done = cleaned["status"] == Task.Status.DONE
            cleaned["completed_at"] = timezone.now() if done else None
        return cleaned

    # The project is written by its row; completed_at follows the status.
    columns = ("project", "completed_at")
    return item_edit(TASK, task_id, actor=actor, version=version, data=data, columns=columns)


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
