"""The model's tools over the owner's tasks: list, search, create, update, complete, delete."""

from __future__ import annotations

from typing import Annotated, Any
from zoneinfo import ZoneInfo

from django.db.models import QuerySet
from pydantic import Field

from talorys.history.tools import SoftDeleteTool
from talorys.lib import search as unified_search
from talorys.lib.schedules import Repeat
from talorys.lib.tools import (
    ListTool,
    Permission,
    Tool,
    ToolArgs,
    ToolContext,
    ToolError,
    register,
)
from talorys.web.schemas import BoundedDatetime, Limit
from talorys.workspace import selectors, services
from talorys.workspace.models import Task
from talorys.workspace.schemas import TaskStatus
from talorys.workspace.tools.common import DUE_AT_HELP, WEEKDAY_RULE, ReadVersion, local_iso


def _task(task: Task, zone: ZoneInfo) -> dict[str, Any]:
    return {
        "id": task.pk,
        "title": task.title,
        "status": task.status,
        "priority": task.priority,
        "due_at": local_iso(task.due_at, zone),
        "project": {"id": task.project.pk, "name": task.project.name} if task.project else None,
        "repeat": task.repeat,
        "version": task.version,
    }


REPEAT_HELP = (
    "Make it a repeating task (the owner says 'every monday', 'each month on the 1st'): a "
    "schedule in the owner's local time, e.g. {'type': 'weekly', 'days': ['mon'], 'time': "
    "'08:00'}, {'type': 'daily', 'time': '07:30'}, {'type': 'monthly', 'day': 1, 'time': "
    "'09:00'} or {'type': 'cron', 'expression': '0 9 * * 1-5'}. Completing it keeps it open "
    "and moves due_at to the next occurrence; without due_at it is due at the first one."
)

TaskId = Annotated[
    int, Field(ge=1, description="The task's id, from list_tasks, search_tasks or search.")
]


class ListTasksArgs(ToolArgs):
    status: TaskStatus | None = Field(
        None, description="Only tasks with this status; omit for both."
    )
    project_id: int | None = Field(None, ge=1, description="Only tasks of this project.")
    due_before: BoundedDatetime | None = Field(
        None, description="Only tasks due strictly before this time. " + DUE_AT_HELP
    )
    due_after: BoundedDatetime | None = Field(
        None, description="Only tasks due at or after this time. " + DUE_AT_HELP
    )
    limit: Limit = 20


@register
class ListTasks(ListTool):
    name = "list_tasks"
    description = (
        "List the owner's tasks, open ones first, soonest due first. Filter by status, project "
        "or a due-date window (e.g. due_before = end of today for 'what is due today'). Returns "
        "ids to use with update_task and complete_task."
    )
    args = ListTasksArgs
    cap = 6
    key = "tasks"

    def rows(self, args: ListTasksArgs, ctx: ToolContext) -> QuerySet[Task]:
        if args.project_id is not None:
            selectors.project_get(project_id=args.project_id)
        return selectors.task_list(
            status=args.status,
            project_id=args.project_id,
            due_before=args.due_before,
            due_after=args.due_after,
        )

    def item(self, row: Task, args: ToolArgs, ctx: ToolContext) -> dict[str, Any]:
        return _task(row, ctx.zone)


class SearchTasksArgs(ToolArgs):
    query: str = Field(
        min_length=1,
        max_length=unified_search.QUERY_MAX,
        description="Words to find in task titles and details.",
    )
    limit: Limit = 20


@register
class SearchTasks(ListTool):
    name = "search_tasks"
    description = (
        "Find tasks whose title or details contain the query (case-insensitive substring). Use "
        "it to get the id of a task the owner names before updating or completing it."
    )
    args = SearchTasksArgs
    cap = 6
    key = "tasks"

    def rows(self, args: SearchTasksArgs, ctx: ToolContext) -> QuerySet[Task] | list[Task]:
        return selectors.task_list(q=args.query)

    def item(self, row: Task, args: ToolArgs, ctx: ToolContext) -> dict[str, Any]:
        return _task(row, ctx.zone)


class CreateTaskArgs(ToolArgs):
    title: str = Field(
        min_length=1, max_length=Task.TITLE_MAX, description="Short title of the task."
    )
    details: str = Field(
        "", max_length=Task.DETAILS_MAX, description="Optional longer description."
    )
    priority: int = Field(
        Task.Priority.NORMAL,
        ge=Task.Priority.LOW,
        le=Task.Priority.HIGH,
        description="1 = low, 2 = normal (default), 3 = high.",
    )
    due_at: BoundedDatetime | None = Field(
        None, description="When it is due. " + DUE_AT_HELP + WEEKDAY_RULE
    )
    project_id: int | None = Field(
        None, ge=1, description="Put it in this project (id from list_projects)."
    )
    repeat: Repeat | None = Field(None, description=REPEAT_HELP)


@register
class CreateTask(Tool):
    name = "create_task"
    description = (
        "Create one task for the owner. Give due_at only when the owner gave a time or date; "
        "it must carry a UTC offset. Returns the new task with its id."
    )
    args = CreateTaskArgs
    permission = Permission.WRITE
    cap = 10

    def run(self, args: CreateTaskArgs, ctx: ToolContext) -> dict[str, Any]:
        task = services.task_create(**args.model_dump(), actor=ctx.actor)
        return {"task": _task(task, ctx.zone)}


class UpdateTaskArgs(ToolArgs):
    task_id: TaskId
    title: str | None = Field(
        None, min_length=1, max_length=Task.TITLE_MAX, description="New title."
    )
    details: str | None = Field(
        None, max_length=Task.DETAILS_MAX, description="New details; '' clears."
    )
    priority: int | None = Field(
        None,
        ge=Task.Priority.LOW,
        le=Task.Priority.HIGH,
        description="1 = low, 2 = normal, 3 = high.",
    )
    due_at: BoundedDatetime | None = Field(
        None, description="New due time; null clears it. " + DUE_AT_HELP + WEEKDAY_RULE
    )
    project_id: int | None = Field(
        None, ge=1, description="Move to this project (id from list_projects); null removes it."
    )
    status: TaskStatus | None = Field(
        None,
        description="'done' completes the task (a repeating one stays open, due at its next "
        "occurrence), 'open' reopens it.",
    )
    repeat: Repeat | None = Field(None, description=REPEAT_HELP + " null stops repeating.")
    version: ReadVersion = None


# Fields where an explicit null means "clear it"; for the others null means "leave it".
_CLEARABLE_TASK_FIELDS = {"details", "due_at", "project_id", "repeat"}


@register
class UpdateTask(Tool):
    name = "update_task"
    description = (
        "Change fields of an existing task. Send only the fields to change; the others stay as "
        "they are. Get task_id from list_tasks or search_tasks first."
    )
    args = UpdateTaskArgs
    permission = Permission.WRITE
    cap = 10

    def run(self, args: UpdateTaskArgs, ctx: ToolContext) -> dict[str, Any]:
        changes = {
            name: getattr(args, name)
            for name in args.model_fields_set - {"task_id", "version"}
            if getattr(args, name) is not None or name in _CLEARABLE_TASK_FIELDS
        }
        if not changes:
            raise ToolError("Give at least one field to change.", code="NOTHING_TO_CHANGE")
        task = services.task_update(
            task_id=args.task_id, actor=ctx.actor, version=args.version, **changes
        )
        return {"task": _task(task, ctx.zone)}


class TaskIdArgs(ToolArgs):
    task_id: TaskId


@register
class CompleteTask(Tool):
    name = "complete_task"
    description = (
        "Mark a task as done. A repeating task (repeat set) stays open, due at its next "
        "occurrence. Get task_id from list_tasks or search_tasks first. Completing a task that "
        "is already done changes nothing."
    )
    args = TaskIdArgs
    permission = Permission.WRITE
    cap = 10

    def run(self, args: TaskIdArgs, ctx: ToolContext) -> dict[str, Any]:
        was_done = selectors.task_get(task_id=args.task_id).status == Task.Status.DONE
        task = services.task_complete(task_id=args.task_id, actor=ctx.actor)
        return {"task": _task(task, ctx.zone), "already_done": was_done}


@register
class DeleteTask(SoftDeleteTool):
    name = "delete_task"
    description = (
        "Propose deleting one task. Nothing happens until the owner approves; never say it is "
        "deleted before that. Find the id with search_tasks or list_tasks first."
    )
    args = TaskIdArgs
    model = Task
    id_arg = "task_id"
    label = "task"
    snapshot_fields = ("title", "details", "status", "priority", "due_at", "project_id", "repeat")
