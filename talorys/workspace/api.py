"""The owner's data over the API: projects, tasks, notes, settings, usage, the bin
(/api/bin) and the model's changes (/api/changes, see talorys/workspace/history.py).

Purging and reverting need the owner's session (``owner_session_auth``): a token, however
scoped, can list and restore but never delete for good or undo the model's work.
"""

from typing import Literal
from zoneinfo import ZoneInfo

from django.db.models import QuerySet
from django.http import HttpRequest
from ninja import Query, Router, Status
from ninja.pagination import paginate

from talorys.accounts.auth import owner_session_auth, request_actor, request_by_token
from talorys.lib.pagination import Pagination, paginate_rows
from talorys.lib.schemas import ErrorOut, QueryText
from talorys.workspace import history, selectors, services
from talorys.workspace.bin_items import BinItems
from talorys.workspace.models import Change, Note, OwnerSettings, Project, Task
from talorys.workspace.schemas import (
    BinEmptyOut,
    BinItemOut,
    ChangeOut,
    ConnectionTestIn,
    ConnectionTestOut,
    NoteIn,
    NoteOut,
    NotePatch,
    ProjectIn,
    ProjectOut,
    ProjectPatch,
    SettingsOut,
    SettingsPatch,
    TaskFilters,
    TaskIn,
    TaskOut,
    TaskPatch,
    UsageOut,
)
from talorys.workspace.services.connection import ConnectionResult, model_connection_test

projects_router = Router(tags=["projects"])
tasks_router = Router(tags=["tasks"])
notes_router = Router(tags=["notes"])


# --- projects ----------------------------------------------------------------------------------


@projects_router.get("", response=list[ProjectOut])
@paginate_rows(ProjectOut)
def project_list(request: HttpRequest, q: QueryText | None = None) -> QuerySet[Project]:
    return selectors.project_list(q=q)


@projects_router.post("", response={201: ProjectOut})
def project_create(request: HttpRequest, payload: ProjectIn) -> Status:
    return Status(
        201, services.project_create(**payload.model_dump(), actor=request_actor(request))
    )


@projects_router.get("/{int:project_id}", response=ProjectOut)
def project_get(request: HttpRequest, project_id: int) -> Project:
    return services.project_get(project_id=project_id)


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
        zone=services.owner_zone() if filters.due else ZoneInfo("UTC"),
        q=filters.q,
    )


@tasks_router.post("", response={201: TaskOut})
def task_create(request: HttpRequest, payload: TaskIn) -> Status:
    return Status(201, services.task_create(**payload.model_dump(), actor=request_actor(request)))


@tasks_router.get("/{int:task_id}", response=TaskOut)
def task_get(request: HttpRequest, task_id: int) -> Task:
    return services.task_get(task_id=task_id)


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
@paginate_rows(NoteOut)
def note_list(request: HttpRequest, q: QueryText | None = None) -> QuerySet[Note]:
    return selectors.note_list(q=q)


@notes_router.post("", response={201: NoteOut})
def note_create(request: HttpRequest, payload: NoteIn) -> Status:
    return Status(201, services.note_create(**payload.model_dump(), actor=request_actor(request)))


@notes_router.get("/{int:note_id}", response=NoteOut)
def note_get(request: HttpRequest, note_id: int) -> Note:
    return services.note_get(note_id=note_id)


@notes_router.patch("/{int:note_id}", response=NoteOut)
def note_update(request: HttpRequest, note_id: int, payload: NotePatch) -> Note:
    return services.note_update(
        note_id=note_id, actor=request_actor(request), **payload.model_dump(exclude_unset=True)
    )


@notes_router.delete("/{int:note_id}", response={204: None})
def note_delete(request: HttpRequest, note_id: int) -> Status:
    services.note_delete(note_id=note_id, actor=request_actor(request))
    return Status(204, None)


bin_router = Router(tags=["bin"])
changes_router = Router(tags=["changes"])

Kind = Literal["task", "note", "project", "memory", "automation", "conversation"]


@bin_router.get("", response=list[BinItemOut])
@paginate(Pagination)
def bin_list(request: HttpRequest) -> BinItems:
    # Read a page at a time (counted in one query), never the whole bin for one page of it.
    return BinItems()


@bin_router.post("/empty", response=BinEmptyOut, auth=owner_session_auth)
def bin_empty(request: HttpRequest) -> dict[str, int]:
    return {"purged": history.bin_empty()}


@bin_router.post("/{kind}/{int:item_id}/restore", response={204: None})
def bin_restore(request: HttpRequest, kind: Kind, item_id: int) -> Status:
    history.bin_restore_item(kind=kind, pk=item_id, actor=request_actor(request))
    return Status(204, None)


@bin_router.delete("/{kind}/{int:item_id}", response={204: None}, auth=owner_session_auth)
def bin_purge(request: HttpRequest, kind: Kind, item_id: int) -> Status:
    history.bin_purge_item(kind=kind, pk=item_id)
    return Status(204, None)


@changes_router.get("", response=list[ChangeOut])
@paginate_rows(ChangeOut)
def change_list(request: HttpRequest) -> QuerySet[Change]:
    return selectors.change_list()


@changes_router.post("/{int:change_id}/revert", response=list[ChangeOut], auth=owner_session_auth)
def change_revert(request: HttpRequest, change_id: int) -> list[Change]:
    made = history.change_revert(change_id=change_id, actor=request_actor(request))
    return list(selectors.change_list(by_model=False).filter(pk__in=[c.pk for c in made]))


settings_router = Router(tags=["settings"])
usage_router = Router(tags=["usage"])


def _settings_out(row: OwnerSettings) -> SettingsOut:
    # Everything stored except the keys (SettingsOut has no field for them), plus what is derived.
    stored = {name: getattr(row, name) for name in SettingsOut.model_fields if hasattr(row, name)}
    return SettingsOut(
        **stored,
        provider=selectors.model_provider_kind(owner_settings=row),
        embeddings_provider=selectors.embeddings_provider_kind(owner_settings=row),
        recall_mode=selectors.recall_mode(owner_settings=row),
        model_api_key_set=bool(row.model_api_key),
        embeddings_api_key_set=bool(row.embeddings_api_key),
    )


@settings_router.get("", response=SettingsOut)
def settings_get(request: HttpRequest) -> SettingsOut:
    return _settings_out(services.owner_settings_get())


@settings_router.patch("", response=SettingsOut)
def settings_update(request: HttpRequest, payload: SettingsPatch) -> SettingsOut:
    changes = payload.model_dump(exclude_unset=True)
    return _settings_out(
        services.owner_settings_update(by_token=request_by_token(request), **changes)
    )


# Session only, like the provider settings: a token must not send the stored key anywhere.
# Beside what every operation answers (talorys/openapi.py): the day's budget spent.
@settings_router.post(
    "/test-connection",
    response={200: ConnectionTestOut, 429: ErrorOut},
    auth=owner_session_auth,
)
def settings_test_connection(request: HttpRequest, payload: ConnectionTestIn) -> ConnectionResult:
    return model_connection_test(**payload.model_dump())


@usage_router.get("", response=UsageOut)
def usage_get(request: HttpRequest) -> selectors.UsageReport:
    return selectors.usage_report(owner_settings=services.owner_settings_get())
