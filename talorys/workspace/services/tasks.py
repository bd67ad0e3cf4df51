"""The owner's tasks: create, change, complete, bin and restore.

A task may repeat (``repeat``: a daily, weekly, monthly or cron schedule, read and rolled by
talorys/lib/schedules.py, the rules automations run by, in the owner's zone). Completing a
repeating task does not close it: it stays open and its due date moves to the next occurrence
after the later of its due date and now (``_rolled``). The move is an edit like any other, in the
change log, so reverting it puts the task back as it was, due when it was. A repeating task with
no due date is given the first occurrence from now, so it always says when it is next due."""

from __future__ import annotations

import datetime as dt
from typing import Any, TypedDict, Unpack

from django.utils import timezone

from talorys.history.bin import bin_move_in, bin_move_out
from talorys.history.kinds import ItemKind, register_kind
from talorys.lib.actors import OWNER, Actor
from talorys.lib.errors import field_refused
from talorys.lib.schedules import next_after, repeat_parse, schedule_dump
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
    repeat: dict[str, Any] | None


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
    if "repeat" in changes:
        repeat = changes["repeat"]
        data["repeat"] = None if repeat is None else schedule_dump(repeat_parse(repeat))
    return data


def _next_due(repeat: dict[str, Any], after: dt.datetime) -> dt.datetime:
    """The first occurrence of ``repeat`` strictly after ``after``, in the owner's zone (a
    recurring schedule always has one)."""
    due = next_after(repeat_parse(repeat), after, owner_zone())
    assert due is not None  # only ``once`` ends, and it is no repeat
    return due


def _rolled(task: Task | None, cleaned: dict[str, Any]) -> dict[str, Any]:
    """``cleaned`` as it applies to a task that may repeat.

    Completing a repeating task moves its due date instead of closing it: to the next occurrence
    after the later of its due date and now. From the due date alone, a daily task overdue by
    three days and completed today would be due yesterday, then today, and need three
    completions to catch up; from now alone, one completed early (Monday's, done on Sunday)
    would be due that Monday again. Setting a repeat on a task without a due date gives it the
    first occurrence from now."""

    def current(name: str) -> Any:
        return cleaned[name] if name in cleaned else getattr(task, name, None)

    repeat, due, now = current("repeat"), current("due_at"), timezone.now()
    if repeat is None:
        return cleaned
    was_open = task is None or task.status == Task.Status.OPEN
    if cleaned.get("status") == Task.Status.DONE and was_open:
        cleaned = cleaned | {"status": Task.Status.OPEN}
        cleaned["due_at"] = _next_due(repeat, max(due, now) if due else now)
    elif due is None:
        cleaned["due_at"] = _next_due(repeat, now)
    return cleaned


def task_create(
    *,
    title: str,
    details: str = "",
    priority: int = Task.Priority.NORMAL,
    due_at: dt.datetime | None = None,
    project_id: int | None = None,
    repeat: dict[str, Any] | None = None,
    actor: Actor = OWNER,
) -> Task:
    fields = TaskChanges(
        title=title,
        details=details,
        priority=priority,
        due_at=due_at,
        project_id=project_id,
        repeat=repeat,
    )
    return item_create(TASK, actor, _rolled(None, _task_clean(fields)))


def task_create_in_words(
    *, text: str, actor: Actor = OWNER, now: dt.datetime | None = None
) -> tuple[Task, Understood]:
    """A task typed in words ("pick up parcel friday 5pm"), read in the owner's zone by the
    reader the tasks page and the demo use (talorys/lib/when.py): the task, and what was read.
    Text that is empty or only a date is refused. A repeating phrase ("water plants every
    monday 8am") is a repeating task, first due at the phrase's next occurrence."""
    got = task_read(text, zone=owner_zone(), now=now, field="text")
    task = task_create(title=got.title, due_at=got.due, repeat=got.schedule, actor=actor)
    return task, got


def task_update(
    *,
    task_id: int,
    actor: Actor = OWNER,
    version: int | None = None,
    **changes: Unpack[TaskChanges],
) -> Task:
    """Apply the given fields. ``status`` moves completed_at with it; "done" on a repeating task
    moves its due date instead (``_rolled``)."""

    def data(task: Task) -> dict[str, Any]:
        cleaned = _rolled(task, _task_clean(changes))
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
    fields=("title", "details", "status", "priority", "due_at", "project_id", "repeat"),
    title=lambda task: task.title,
    restore=lambda *, pk, actor, change: task_restore(task_id=pk, actor=actor),
    delete=lambda *, pk, actor: task_delete(task_id=pk, actor=actor),
    apply=_task_apply,
)
register_kind(TASK)
