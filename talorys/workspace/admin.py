"""Django admin for the owner's data: the operator's view to inspect and repair records."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import Count, Q, QuerySet
from django.http import HttpRequest

from talorys.web.service_admin import DeletedFilter, ServiceAdmin
from talorys.workspace import services
from talorys.workspace.models import Note, Project, Task


@admin.register(Project)
class ProjectAdmin(ServiceAdmin):
    list_display = ["name", "open_tasks", "updated_at"]
    search_fields = ["name", "description"]
    fields = ["name", "description", "created_at", "updated_at", "deleted_at"]
    readonly_fields = ["created_at", "updated_at", "deleted_at"]

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return (
            super()
            .get_queryset(request)
            .annotate(_open=Count("tasks", filter=Q(tasks__status=Task.Status.OPEN)))
        )

    @admin.display(description="open tasks", ordering="_open")
    def open_tasks(self, obj: Project) -> int:
        return getattr(obj, "_open", 0)  # annotated by get_queryset

    def service_create(self, request: HttpRequest, data: dict[str, Any]) -> Project:
        return services.project_create(**data, actor=self.actor(request))

    def service_update(self, request: HttpRequest, obj: Project, changes: dict[str, Any]) -> None:
        services.project_update(project_id=obj.pk, **changes, actor=self.actor(request))

    def service_delete(self, request: HttpRequest, obj: Project) -> None:
        services.project_delete(project_id=obj.pk, actor=self.actor(request))


def _task_arguments(data: dict[str, Any]) -> dict[str, Any]:
    if "project" in data:
        project = data.pop("project")
        data["project_id"] = project.pk if project is not None else None
    return data


class TaskStatusFilter(admin.SimpleListFilter):
    """A task's status among live tasks: one in the bin is neither open nor done."""

    title = "status"
    parameter_name = "status__exact"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:
        return list(Task.Status.choices)

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        if self.value() in Task.Status.values:
            return queryset.filter(status=self.value(), deleted_at__isnull=True)
        return queryset


@admin.register(Task)
class TaskAdmin(ServiceAdmin):
    list_display = ["title", "state", "priority", "due_at", "project", "updated_at"]
    list_filter = [
        TaskStatusFilter,
        "priority",
        "project",
        DeletedFilter,
        ("due_at", admin.DateFieldListFilter),
    ]
    search_fields = ["title", "details"]
    list_select_related = ["project"]
    autocomplete_fields = ["project"]
    date_hierarchy = "due_at"
    # completed_at follows status (task_update moves it); the bin is entered by deleting.
    fields = [
        "title",
        "details",
        "status",
        "priority",
        "due_at",
        "project",
        "completed_at",
        "created_at",
        "updated_at",
        "deleted_at",
    ]
    readonly_fields = ["completed_at", "created_at", "updated_at", "deleted_at"]

    @admin.display(description="status", ordering="status")
    def state(self, obj: Task) -> str:
        return "In the bin" if obj.deleted_at is not None else obj.get_status_display()

    def service_create(self, request: HttpRequest, data: dict[str, Any]) -> Task:
        status = data.pop("status", Task.Status.OPEN)
        task = services.task_create(**_task_arguments(data), actor=self.actor(request))
        if status != Task.Status.OPEN:
            services.task_update(task_id=task.pk, status=status, actor=self.actor(request))
        return task

    def service_update(self, request: HttpRequest, obj: Task, changes: dict[str, Any]) -> None:
        services.task_update(task_id=obj.pk, **_task_arguments(changes), actor=self.actor(request))

    def service_delete(self, request: HttpRequest, obj: Task) -> None:
        services.task_delete(task_id=obj.pk, actor=self.actor(request))


@admin.register(Note)
class NoteAdmin(ServiceAdmin):
    list_display = ["title", "length", "updated_at"]
    search_fields = ["title", "content"]
    fields = ["title", "content", "created_at", "updated_at", "deleted_at"]
    readonly_fields = ["created_at", "updated_at", "deleted_at"]

    @admin.display(description="characters")
    def length(self, obj: Note) -> int:
        return len(obj.content)

    def service_create(self, request: HttpRequest, data: dict[str, Any]) -> Note:
        return services.note_create(**data, actor=self.actor(request))

    def service_update(self, request: HttpRequest, obj: Note, changes: dict[str, Any]) -> None:
        services.note_update(note_id=obj.pk, **changes, actor=self.actor(request))

    def service_delete(self, request: HttpRequest, obj: Note) -> None:
        services.note_delete(note_id=obj.pk, actor=self.actor(request))
