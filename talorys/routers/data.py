import datetime as dt

from django.http import HttpRequest
from ninja import Query, Router, Schema, Status
from ninja.pagination import LimitOffsetPagination, paginate

from talorys import selectors, services
from talorys.models import Task
from talorys.schemas import TaskIn, TaskOut, TaskPatch

projects_router = Router(tags=["projects"])
tasks_router = Router(tags=["tasks"])
notes_router = Router(tags=["notes"])
notifications_router = Router(tags=["notifications"])


class TaskFilters(Schema):
    status: str | None = None
    project: int | None = None
    due_before: dt.datetime | None = None
    due_after: dt.datetime | None = None
    q: str | None = None


@tasks_router.get("", response=list[TaskOut])
@paginate(LimitOffsetPagination)
def task_list(request: HttpRequest, filters: Query[TaskFilters]):
    return selectors.task_list(
        status=filters.status,
        project_id=filters.project,
        due_before=filters.due_before,
        due_after=filters.due_after,
        q=filters.q,
    )


@tasks_router.post("", response={201: TaskOut})
def task_create(request: HttpRequest, payload: TaskIn) -> Status:
    return Status(201, services.task_create(**payload.model_dump()))


@tasks_router.get("/{int:task_id}", response=TaskOut)
def task_get(request: HttpRequest, task_id: int) -> Task:
    return services.task_get(task_id=task_id)


@tasks_router.patch("/{int:task_id}", response=TaskOut)
def task_update(request: HttpRequest, task_id: int, payload: TaskPatch) -> Task:
    return services.task_update(task_id=task_id, **payload.model_dump(exclude_unset=True))


@tasks_router.delete("/{int:task_id}", response={204: None})
def task_delete(request: HttpRequest, task_id: int) -> Status:
    services.task_delete(task_id=task_id)
    return Status(204, None)
