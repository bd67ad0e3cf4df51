"""The owner's projects: create, change, bin and restore (with their tasks' links).

Two live projects never share a name, compared without case ("Home" and "home" are one name):
a create, a rename or a restore that would make a second is refused (Conflict), for the owner's
pages and API and the model's tools alike. The check holds a transaction-wide advisory lock on
PostgreSQL, so two creates at once cannot both pass it. No database constraint backs it:
projects made before the check may share a name, and stay as they are until renamed.
"""

from __future__ import annotations

import hashlib
from typing import Any, TypedDict, Unpack

from django.db import connection, transaction

from talorys.history.bin import bin_move_in, bin_move_out, latest_delete
from talorys.history.kinds import ItemKind, register_kind
from talorys.history.models import Change
from talorys.lib.actors import OWNER, Actor
from talorys.lib.errors import Conflict, field_refused
from talorys.workspace.models import Project, Task
from talorys.workspace.services.common import item_create, item_edit, item_texts

_NAMES_LOCK = int.from_bytes(
    hashlib.blake2b(b"talorys:project-names", digest_size=8).digest(), signed=True
)


def _name_free(name: str, *, but: int | None = None) -> None:
    """Refuse ``name`` when another live project has it, in any case. Call it inside the
    transaction that writes the name: on PostgreSQL the lock waits for any other project
    name being written, so the two checks cannot both pass (SQLite writes one at a time)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_NAMES_LOCK])
    others = Project.objects.live().filter(name__iexact=name)
    taken = (others.exclude(pk=but) if but is not None else others).first()
    if taken is not None:
        raise Conflict(
            f"A project named “{taken.name}” already exists. Choose another name, "
            "or use that project.",
            details={"project_id": taken.pk, "name": taken.name},
        )


class ProjectChanges(TypedDict, total=False):
    """What project_update may change; a field left out keeps its value."""

    name: str
    description: str | None


def _project_clean(changes: ProjectChanges) -> dict[str, Any]:
    return item_texts(changes, ("name", Project.NAME_MAX), ("description", Project.DESCRIPTION_MAX))


def project_create(*, name: str, description: str = "", actor: Actor = OWNER) -> Project:
    data = _project_clean({"name": name, "description": description})
    with transaction.atomic():
        _name_free(data["name"])
        return item_create(PROJECT, actor, data)


def project_update(
    *,
    project_id: int,
    actor: Actor = OWNER,
    version: int | None = None,
    **changes: Unpack[ProjectChanges],
) -> Project:
    def data(project: Project) -> dict[str, Any]:
        cleaned = _project_clean(changes)
        if "name" in cleaned and cleaned["name"].lower() != project.name.lower():
            _name_free(cleaned["name"], but=project.pk)
        return cleaned

    return item_edit(PROJECT, project_id, actor=actor, version=version, data=data)


def project_ref(project_id: int | None) -> Project | None:
    """The project a task points to; a missing one is bad input, not a missing page."""
    if project_id is None:
        return None
    project = Project.objects.live().filter(pk=project_id).first()
    if project is None:
        raise field_refused(f"project_id: project {project_id} does not exist.", field="project_id")
    return project


def project_delete(*, project_id: int, actor: Actor = OWNER) -> list[int]:
    """To the bin; its tasks stay, without a project. Returns those tasks: the delete's change
    keeps them, and a restore relinks them."""
    with transaction.atomic():
        task_ids = list(Task.objects.filter(project_id=project_id).values_list("pk", flat=True))
        bin_move_in(PROJECT, project_id, actor, detail={"task_ids": task_ids})
        Task.objects.filter(pk__in=task_ids).update(project=None)
    return task_ids


def project_restore(*, project_id: int, actor: Actor = OWNER, change: Change | None = None) -> None:
    """Out of the bin, with the tasks it had that are still without a project. ``change``: the
    delete being undone (the latest one if not given), whose detail names those tasks."""
    with transaction.atomic():
        change = change or latest_delete(PROJECT.name, project_id)
        binned = Project.objects.filter(pk=project_id, deleted_at__isnull=False).first()
        if binned is not None:
            _name_free(binned.name, but=project_id)
        bin_move_out(PROJECT, project_id, actor)
        task_ids = (change.detail if change else {}).get("task_ids", [])
        Task.objects.filter(pk__in=task_ids, project__isnull=True).update(project_id=project_id)


PROJECT = ItemKind(
    name="project",
    model=Project,
    fields=("name", "description"),
    title=lambda project: project.name,
    restore=lambda *, pk, actor, change: project_restore(project_id=pk, actor=actor, change=change),
    delete=lambda *, pk, actor: project_delete(project_id=pk, actor=actor),
    apply=lambda *, pk, values, actor: project_update(project_id=pk, actor=actor, **values),
)
register_kind(PROJECT)
