"""Everything that changes the owner's core data. Edges (API, pages, tools, tasks) call these.

Functions are keyword-only and named ``<entity>_<verb>``. Each runs in a transaction where it
writes more than one row; none of them calls a model provider or any other HTTP service.
"""

from __future__ import annotations

import datetime as dt
from typing import Any
from zoneinfo import ZoneInfo

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from talorys.lib.actors import OWNER, Actor
from talorys.lib.errors import BudgetExhausted, Forbidden, NotFound, ValidationFailed
from talorys.lib.validation import DATE_MAX, DATE_MIN, DATE_RANGE_TEXT, clean_text
from talorys.workspace.history import (
    BIN_RETENTION,
    ItemKind,
    bin_move,
    bin_restore,
    change_record,
    item_fields,
    register_kind,
)
from talorys.workspace.history import bin_purge as _bin_purge_all
from talorys.workspace.models import Change, Note, OwnerSettings, Project, Task, UsageDay
from talorys.workspace.selectors import USAGE_KINDS, usage_report

MAX_TITLE = 500
MAX_NOTE_CONTENT = 200_000


def _aware(value: dt.datetime | None, *, field: str) -> dt.datetime | None:
    if value is not None and timezone.is_naive(value):
        raise ValidationFailed(f"{field} needs a time zone offset, e.g. 2026-12-01T09:00:00+01:00.")
    if value is not None and not DATE_MIN <= value < DATE_MAX:
        raise ValidationFailed(f"{field} {DATE_RANGE_TEXT}.")
    return value


# --- projects ----------------------------------------------------------------------------------


def project_get(*, project_id: int) -> Project:
    project = Project.objects.live().filter(pk=project_id).first()
    if project is None:
        raise NotFound(f"Project {project_id} does not exist.")
    return project


def project_create(*, name: str, description: str = "", actor: Actor = OWNER) -> Project:
    with transaction.atomic():
        project = Project.objects.create(
            name=clean_text(name, field="name", max_length=200),
            description=clean_text(
                description, field="description", max_length=10_000, required=False
            ),
        )
        _created(PROJECT, project, actor)
    return project


def project_update(*, project_id: int, actor: Actor = OWNER, **changes: Any) -> Project:
    with transaction.atomic():
        # Locked: the revision's "before" must be what this update replaced.
        project = Project.objects.live().select_for_update().filter(pk=project_id).first()
        if project is None:
            raise NotFound(f"Project {project_id} does not exist.")
        before = item_fields(PROJECT, project)
        if "name" in changes:
            project.name = clean_text(changes["name"], field="name", max_length=200)
        if "description" in changes:
            project.description = clean_text(
                changes["description"] or "", field="description", max_length=10_000, required=False
            )
        project.save()
        _updated(PROJECT, project, before, actor)
    return project


def project_delete(*, project_id: int, actor: Actor = OWNER) -> list[int]:
    """To the bin; its tasks stay, without a project. Returns those tasks (restore relinks them)."""
    return project_bin(project_id=project_id, actor=actor)


def _project_ref(project_id: int | None) -> Project | None:
    """The project a task points to; a missing one is bad input, not a missing page."""
    if project_id is None:
        return None
    project = Project.objects.live().filter(pk=project_id).first()
    if project is None:
        raise ValidationFailed(f"project_id: project {project_id} does not exist.")
    return project


# --- tasks -------------------------------------------------------------------------------------


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
        raise ValidationFailed("priority must be 1 (low), 2 (normal) or 3 (high).")
    project = _project_ref(project_id)
    with transaction.atomic():
        task = Task.objects.create(
            title=clean_text(title, field="title", max_length=MAX_TITLE),
            details=clean_text(details, field="details", max_length=20_000, required=False),
            priority=priority,
            due_at=_aware(due_at, field="due_at"),
            project=project,
        )
        _created(TASK, task, actor)
    return task


def task_update(*, task_id: int, actor: Actor = OWNER, **changes: Any) -> Task:
    """Apply the given fields. ``status`` moves completed_at with it."""
    with transaction.atomic():
        task = Task.objects.live().select_for_update().filter(pk=task_id).first()
        if task is None:
            raise NotFound(f"Task {task_id} does not exist.")
        before = item_fields(TASK, task)
        if "title" in changes:
            task.title = clean_text(changes["title"], field="title", max_length=MAX_TITLE)
        if "details" in changes:
            task.details = clean_text(
                changes["details"] or "", field="details", max_length=20_000, required=False
            )
        if "priority" in changes:
            if changes["priority"] not in Task.Priority.values:
                raise ValidationFailed("priority must be 1 (low), 2 (normal) or 3 (high).")
            task.priority = changes["priority"]
        if "due_at" in changes:
            task.due_at = _aware(changes["due_at"], field="due_at")
        if "project_id" in changes:
            task.project = _project_ref(changes["project_id"])
        if "status" in changes:
            status = changes["status"]
            if status not in Task.Status.values:
                raise ValidationFailed("status must be 'open' or 'done'.")
            if status != task.status:
                task.status = status
                task.completed_at = timezone.now() if status == Task.Status.DONE else None
        task.save()
        _updated(TASK, task, before, actor)
    return task


def task_complete(*, task_id: int, actor: Actor = OWNER) -> Task:
    return task_update(task_id=task_id, status=Task.Status.DONE, actor=actor)


def task_delete(*, task_id: int, actor: Actor = OWNER) -> None:
    """To the bin, restorable for BIN_RETENTION."""
    _bin(TASK, task_id, actor)


# --- notes -------------------------------------------------------------------------------------


def note_get(*, note_id: int) -> Note:
    note = Note.objects.live().filter(pk=note_id).first()
    if note is None:
        raise NotFound(f"Note {note_id} does not exist.")
    return note


def note_create(*, title: str, content: str = "", actor: Actor = OWNER) -> Note:
    with transaction.atomic():
        note = Note.objects.create(
            title=clean_text(title, field="title", max_length=300),
            content=clean_text(
                content, field="content", max_length=MAX_NOTE_CONTENT, required=False
            ),
        )
        _created(NOTE, note, actor)
    return note


def note_update(*, note_id: int, actor: Actor = OWNER, **changes: Any) -> Note:
    """Locked like note_append, so a rewrite and an append never lose each other's change."""
    with transaction.atomic():
        note = Note.objects.live().select_for_update().filter(pk=note_id).first()
        if note is None:
            raise NotFound(f"Note {note_id} does not exist.")
        before = item_fields(NOTE, note)
        if "title" in changes:
            note.title = clean_text(changes["title"], field="title", max_length=300)
        if "content" in changes:
            note.content = clean_text(
                changes["content"] or "",
                field="content",
                max_length=MAX_NOTE_CONTENT,
                required=False,
            )
        note.save()
        _updated(NOTE, note, before, actor)
    return note


def note_append(*, note_id: int, text: str, actor: Actor = OWNER) -> Note:
    """Append a paragraph. Locked so that two appends never lose each other's text."""
    text = clean_text(text, field="text", max_length=MAX_NOTE_CONTENT)
    with transaction.atomic():
        note = Note.objects.live().select_for_update().filter(pk=note_id).first()
        if note is None:
            raise NotFound(f"Note {note_id} does not exist.")
        before = item_fields(NOTE, note)
        content = f"{note.content.rstrip()}\n\n{text}" if note.content.strip() else text
        if len(content) > MAX_NOTE_CONTENT:
            raise ValidationFailed(f"The note would be longer than {MAX_NOTE_CONTENT} characters.")
        note.content = content
        note.save(update_fields=["content", "updated_at"])
        _updated(NOTE, note, before, actor)
    return note


def note_rename(*, note_id: int, title: str, actor: Actor = OWNER) -> Note:
    return note_update(note_id=note_id, title=title, actor=actor)


def note_delete(*, note_id: int, actor: Actor = OWNER) -> None:
    """To the bin, restorable for BIN_RETENTION."""
    _bin(NOTE, note_id, actor)


# --- owner settings ----------------------------------------------------------------------------


def owner_settings_get() -> OwnerSettings:
    settings_row = OwnerSettings.objects.filter(pk=1).first()
    if settings_row is None:
        try:
            with transaction.atomic():
                settings_row = OwnerSettings.objects.create(pk=1)
        except IntegrityError:  # made by a concurrent request
            settings_row = OwnerSettings.objects.get(pk=1)
    return settings_row


def owner_zone() -> ZoneInfo:
    """The owner's time zone, in which schedules run and times are shown to the model."""
    return ZoneInfo(owner_settings_get().time_zone)


# Every owner setting is settable, except the row's id and its timestamp.
SETTINGS_FIELDS = frozenset(
    field.name
    for field in OwnerSettings._meta.concrete_fields
    if field.name not in {"id", "updated_at"}
)


# Bounds the database cannot express: a turn needs at least one step, and no single setting may
# make a turn unbounded.
SETTINGS_BOUNDS = {
    "daily_ai_requests": (0, 1_000_000),
    "daily_scheduled_ai_requests": (0, 1_000_000),
    "daily_embedding_requests": (0, 10_000_000),
    "max_steps_per_turn": (1, 50),
    "max_tool_calls_per_turn": (0, 200),
    "max_output_tokens": (16, 1_000_000),
    "max_context_tokens": (256, 10_000_000),
}


def owner_settings_check(**changes: Any) -> None:
    """Raise ValidationFailed for settings the model fields alone would accept but we do not.

    Also used by the admin form, so the operator meets the same rules as the owner.
    """
    unknown = set(changes) - SETTINGS_FIELDS
    if unknown:
        raise ValidationFailed(f"Unknown settings: {', '.join(sorted(unknown))}.")
    for key in ("model_base_url", "embeddings_base_url"):
        url = changes.get(key)
        if url and not url.startswith(("http://", "https://")):
            raise ValidationFailed(f"{key} must start with http:// or https://.")
    for key, (low, high) in SETTINGS_BOUNDS.items():
        value = changes.get(key)
        if value is not None and (not isinstance(value, int) or not low <= value <= high):
            raise ValidationFailed(f"{key} must be between {low} and {high}.")


# Where the model and embedding requests go, and with which key: only the owner's session may
# change these. A token that could point model_base_url elsewhere would have the stored key sent
# there with the next chat.
SESSION_ONLY_SETTINGS = frozenset(
    {
        "model_base_url",
        "model_name",
        "model_api_key",
        "semantic_enabled",
        "embeddings_base_url",
        "embeddings_model",
        "embeddings_api_key",
    }
)
# A stored key belongs to its provider: a new URL drops it unless a key comes with the change.
PROVIDER_URL_KEYS = {"model_base_url": "model_api_key", "embeddings_base_url": "embeddings_api_key"}


def owner_settings_update(*, by_token: bool = False, **changes: Any) -> OwnerSettings:
    """Apply the given settings, all or none. An empty or null key clears it.

    by_token: the change comes with an API token, which may not touch SESSION_ONLY_SETTINGS.
    Changing a provider URL without sending its key clears the stored key (PROVIDER_URL_KEYS).
    """
    if by_token and SESSION_ONLY_SETTINGS & set(changes):
        raise Forbidden(
            "Provider settings and keys need the owner's session: "
            + ", ".join(sorted(SESSION_ONLY_SETTINGS & set(changes)))
            + "."
        )
    owner_settings_check(**changes)
    with transaction.atomic():
        # save() writes every column: the lock stops two concurrent patches of different
        # settings from undoing each other.
        row = OwnerSettings.objects.select_for_update().get(pk=owner_settings_get().pk)
        for url_field, key_field in PROVIDER_URL_KEYS.items():
            new_url = (changes.get(url_field) or "").strip()
            if (
                url_field in changes
                and key_field not in changes
                and new_url != getattr(row, url_field)
            ):
                changes[key_field] = ""
        for key, value in changes.items():
            if value is None and isinstance(getattr(row, key), str):
                value = ""
            setattr(row, key, value.strip() if isinstance(value, str) else value)
        try:
            row.full_clean()
        except ValidationError as exc:
            raise ValidationFailed(
                "; ".join(f"{field}: {' '.join(msgs)}" for field, msgs in exc.message_dict.items())
            ) from exc
        row.save()
    return row


# --- usage -------------------------------------------------------------------------------------


def _usage_today() -> UsageDay:
    day = timezone.now().date()
    row = UsageDay.objects.filter(day=day).first()
    if row is None:
        try:
            with transaction.atomic():
                row = UsageDay.objects.create(day=day)
        except IntegrityError:
            row = UsageDay.objects.get(day=day)
    return row


def usage_reserve(*, kind: str, count: int = 1) -> None:
    """Reserve ``count`` requests of ``kind`` before a provider call, or raise BudgetExhausted.

    A conditional UPDATE, so concurrent turns and workers can never overspend the day's budget.
    It is one query on the hot path; the day's row is made only when the first try finds none.
    """
    column, limit_field = USAGE_KINDS[kind]
    limit = getattr(owner_settings_get(), limit_field)
    within = {"day": timezone.now().date(), f"{column}__lte": limit - count}
    spend = {column: F(column) + count}
    updated = UsageDay.objects.filter(**within).update(**spend)
    if not updated:
        _usage_today()
        updated = UsageDay.objects.filter(**within).update(**spend)
    if not updated:
        raise BudgetExhausted(
            f"Today's {kind.replace('_', ' ')} request budget ({limit}) is used up."
        )


def usage_remaining(*, kind: str) -> int:
    column, _limit_field = USAGE_KINDS[kind]
    return usage_report(owner_settings=owner_settings_get(), days=1)["remaining"][column]


def usage_record_tokens(*, input_tokens: int, output_tokens: int) -> None:
    day = _usage_today()
    UsageDay.objects.filter(pk=day.pk).update(
        input_tokens=F("input_tokens") + max(0, input_tokens),
        output_tokens=F("output_tokens") + max(0, output_tokens),
    )


# --- the bin and the revisions of the core kinds (talorys/workspace/history.py) ---------------------------


def _created(kind: ItemKind, obj: Any, actor: Actor) -> None:
    change_record(
        kind=kind.name,
        obj=obj,
        action=Change.Action.CREATE,
        actor=actor,
        after=item_fields(kind, obj),
    )


def _updated(kind: ItemKind, obj: Any, before: dict[str, Any], actor: Actor) -> None:
    change_record(
        kind=kind.name,
        obj=obj,
        action=Change.Action.UPDATE,
        actor=actor,
        before=before,
        after=item_fields(kind, obj),
    )


def _bin(kind: ItemKind, pk: int, actor: Actor, detail: dict[str, Any] | None = None) -> None:
    """Move a live row to the bin and record who did. Call inside a transaction or alone."""
    with transaction.atomic():
        obj = kind.model.objects.live().select_for_update().filter(pk=pk).first()
        if obj is None:
            raise NotFound(f"{kind.name.capitalize()} {pk} does not exist.")
        bin_move(model=kind.model, pk=pk)
        change_record(
            kind=kind.name,
            obj=obj,
            action=Change.Action.DELETE,
            actor=actor,
            before=item_fields(kind, obj),
            detail=detail,
        )


def project_bin(*, project_id: int, actor: Actor = OWNER) -> list[int]:
    """The project goes to the bin and its tasks leave it; returns those tasks for the undo."""
    with transaction.atomic():
        task_ids = list(Task.objects.filter(project_id=project_id).values_list("pk", flat=True))
        _bin(PROJECT, project_id, actor, detail={"task_ids": task_ids})
        Task.objects.filter(pk__in=task_ids).update(project=None)
    return task_ids


def project_restore(*, project_id: int, task_ids: list[int]) -> None:
    """Out of the bin, with the tasks it had that are still without a project."""
    with transaction.atomic():
        bin_restore(model=Project, pk=project_id)
        Task.objects.filter(pk__in=task_ids, project__isnull=True).update(project_id=project_id)


def bin_purge(*, older_than: dt.timedelta = BIN_RETENTION) -> int:
    """Delete for good what has been in the bin longer than ``older_than``: every kind."""
    return _bin_purge_all(older_than=older_than)


def _restored(kind: ItemKind, pk: int, actor: Actor) -> None:
    obj = kind.model.objects.get(pk=pk)
    change_record(
        kind=kind.name,
        obj=obj,
        action=Change.Action.RESTORE,
        actor=actor,
        after=item_fields(kind, obj),
    )


def _restore(name: str) -> Any:
    def restore(*, pk: int, actor: Actor, change: Change | None) -> None:
        kind = {"task": TASK, "note": NOTE}[name]
        with transaction.atomic():
            bin_restore(model=kind.model, pk=pk)
            _restored(kind, pk, actor)

    return restore


def _project_restore(*, pk: int, actor: Actor, change: Change | None) -> None:
    with transaction.atomic():
        task_ids = (change.detail if change else {}).get("task_ids", [])
        project_restore(project_id=pk, task_ids=task_ids)
        _restored(PROJECT, pk, actor)


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
    restore=_restore("task"),
    bin=lambda *, pk, actor: task_delete(task_id=pk, actor=actor),
    apply=_task_apply,
)
NOTE = ItemKind(
    name="note",
    model=Note,
    fields=("title", "content"),
    title=lambda note: note.title,
    restore=_restore("note"),
    bin=lambda *, pk, actor: note_delete(note_id=pk, actor=actor),
    apply=lambda *, pk, values, actor: note_update(note_id=pk, actor=actor, **values),
)
PROJECT = ItemKind(
    name="project",
    model=Project,
    fields=("name", "description"),
    title=lambda project: project.name,
    restore=_project_restore,
    bin=lambda *, pk, actor: project_delete(project_id=pk, actor=actor),
    apply=lambda *, pk, values, actor: project_update(project_id=pk, actor=actor, **values),
)
for _kind in (TASK, NOTE, PROJECT):
    register_kind(_kind)
