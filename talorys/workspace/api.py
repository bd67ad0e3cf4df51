"""The owner's projects, tasks and notes over the API. Deletes go to the bin
(talorys/history/api.py lists, restores and purges it)."""

from zoneinfo import ZoneInfo

from django.db.models import QuerySet
from django.http import HttpRequest
from ninja import Query, Router, Status
from ninja.pagination import paginate

from talorys.accounts.auth import request_actor
from talorys.owner.selectors import owner_zone
from talorys.web.pagination import Pagination, paginate_rows
from talorys.web.schemas import ErrorOut, QueryText
from talorys.workspace import selectors, services
from talorys.workspace.models import Note, Project, Task
from talorys.workspace.schemas import (
    NoteIn,
    NoteOut,
    NotePatch,
    NoteTaskTick,
    ProjectIn,
    ProjectOut,
    ProjectPatch,
    TaskFilters,
    TaskIn,
    TaskOut,
    TaskPatch,
    TaskQuickOut,
    TaskReadOut,
    TaskWordsIn,
)

projects_router = Router(tags=["projects"])
tasks_router = Router(tags=["tasks"])
notes_router = Router(tags=["notes"])


# --- projects ----------------------------------------------------------------------------------


@projects_router.get("", response=list[ProjectOut])
@paginate(Pagination)
def project_list(request: HttpRequest, q: QueryText | None = None) -> QuerySet[Project]:
    return selectors.project_list(q=q)


# 409: a project of that name (in any case) exists already; its id is in the error's details.
@projects_router.post("", response={201: ProjectOut, 409: ErrorOut})
def project_create(request: HttpRequest, payload: ProjectIn) -> Status:
    return Status(
        201, services.project_create(**payload.model_dump(), actor=request_actor(request))
    )


@projects_router.get("/{int:project_id}", response=ProjectOut)
def project_get(request: HttpRequest, project_id: int) -> Project:
    return selectors.project_get(project_id=project_id)


@projects_router.patch("/{int:project_id}", response=ProjectOut)
def project_update(request: HttpRequest, project_id: int, payload: ProjectPatch) -> Project:
    return services.project_update(
        project_id=project_id,
        actor=request_actor(request),
        **payload.model_dump(exclude_unset=True),
    )


@projects_router.delete("/{int:project_id}", response={204: None})
def project_delete(request: HttpRequest, project_id: int) -> Status:
    services.project_delete(project_id=project_id, actor=request_actor(request))
    return Status(204, None)


# --- tasks -------------------------------------------------------------------------------------


@tasks_router.get("", response=list[TaskOut])
@paginate_rows(TaskOut)
def task_list(request: HttpRequest, filters: Query[TaskFilters]) -> QuerySet[Task]:
    return selectors.task_list(
        status=filters.status,
        project_id=filters.project,
        due_before=filters.due_before,
        due_after=filters.due_after,
        due=filters.due,
        # The days of a due filter are the owner's.
        zone=owner_zone() if filters.due else ZoneInfo("UTC"),
        q=filters.q,
    )


@tasks_router.post("", response={201: TaskOut})
def task_create(request: HttpRequest, payload: TaskIn) -> Status:
    return Status(201, services.task_create(**payload.model_dump(), actor=request_actor(request)))


@tasks_router.post("/quick", response={201: TaskQuickOut})
def task_create_in_words(request: HttpRequest, payload: TaskWordsIn) -> Status:
    """Add a task typed in words, as the tasks page's quick add reads them: “pick up parcel
    friday 5pm” is the task “pick up parcel” due then, in the owner's time zone; “water plants
    every monday 8am” a task that repeats, due next Monday at 08:00. ``read`` says what was
    read. Text that is only a date is refused (422)."""
    task, got = services.task_create_in_words(text=payload.text, actor=request_actor(request))
    read = TaskReadOut(
        title=got.title, due_at=got.due, words=got.words, said=got.said, repeat=task.repeat
    )
    return Status(201, TaskQuickOut(**TaskOut.from_orm(task).model_dump(), read=read))


@tasks_router.get("/{int:task_id}", response=TaskOut)
def task_get(request: HttpRequest, task_id: int) -> Task:
    return selectors.task_get(task_id=task_id)


@tasks_router.patch("/{int:task_id}", response=TaskOut)
def task_update(request: HttpRequest, task_id: int, payload: TaskPatch) -> Task:
    return services.task_update(
        task_id=task_id, actor=request_actor(request), **payload.model_dump(exclude_unset=True)
    )


@tasks_router.delete("/{int:task_id}", response={204: None})
def task_delete(request: HttpRequest, task_id: int) -> Status:
    services.task_delete(task_id=task_id, actor=request_actor(request))
    return Status(204, None)


# --- notes -------------------------------------------------------------------------------------


@notes_router.get("", response=list[NoteOut])
@paginate(Pagination)
def note_list(request: HttpRequest, q: QueryText | None = None) -> QuerySet[Note]:
    return selectors.note_list(q=q)


@notes_router.post("", response={201: NoteOut})
def note_create(request: HttpRequest, payload: NoteIn) -> Status:
    return Status(201, services.note_create(**payload.model_dump(), actor=request_actor(request)))


@notes_router.get("/{int:note_id}", response=NoteOut)
def note_get(request: HttpRequest, note_id: int) -> Note:
    return selectors.note_get(note_id=note_id)


@notes_router.patch("/{int:note_id}", response=NoteOut)
def note_update(request: HttpRequest, note_id: int, payload: NotePatch) -> Note:
    return services.note_update(
        note_id=note_id, actor=request_actor(request), **payload.model_dump(exclude_unset=True)
    )


@notes_router.post("/{int:note_id}/tasks/{int:index}", response=NoteOut)
def note_task_tick(request: HttpRequest, note_id: int, index: int, payload: NoteTaskTick) -> Note:
    """Tick or untick the note's checkbox number ``index`` (from 0, in the order the note shows
    them): the line's ``[ ]`` becomes ``[x]`` or back, recorded as an edit of the note."""
    return services.note_task_tick(
        note_id=note_id, index=index, actor=request_actor(request), **payload.model_dump()
    )


@notes_router.delete("/{int:note_id}", response={204: None})
def note_delete(request: HttpRequest, note_id: int) -> Status:
    services.note_delete(note_id=note_id, actor=request_actor(request))
    return Status(204, None)
