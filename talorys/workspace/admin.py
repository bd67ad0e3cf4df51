"""Django admin for the owner's data: the operator's view to inspect and repair records."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.db.models import Count, Q, QuerySet
from django.http import HttpRequest

from talorys.lib.errors import ValidationFailed
from talorys.lib.readonly_admin import ReadOnlyAdmin

# The bases, where the other apps' admins have always imported them from.
from talorys.lib.service_admin import BinAdmin as BinAdmin
from talorys.lib.service_admin import DeletedFilter as DeletedFilter
from talorys.lib.service_admin import ServiceAdmin as ServiceAdmin
from talorys.workspace import services
from talorys.workspace.models import Change, Note, OwnerSettings, Project, Task, UsageDay


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


KEY_FIELDS = ("model_api_key", "embeddings_api_key")


class OwnerSettingsForm(forms.ModelForm):
    class Meta:
        model = OwnerSettings
        fields = sorted(services.SETTINGS_FIELDS)
        # Keys are write-only here too: the page never sends a stored key back to the browser.
        widgets = {name: forms.PasswordInput(render_value=False) for name in KEY_FIELDS}
        help_texts = {
            name: "Leave empty to keep the stored key; clear it from the owner's settings page."
            for name in KEY_FIELDS
        }

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or self.cleaned_data
        try:
            services.owner_settings_check(
                **{k: v for k, v in cleaned.items() if k in services.SETTINGS_FIELDS}
            )
        except ValidationFailed as exc:
            raise forms.ValidationError(exc.message) from exc
        return cleaned


@admin.register(OwnerSettings)
class OwnerSettingsAdmin(ServiceAdmin):
    form = OwnerSettingsForm
    list_display = ["__str__", "time_zone", "model_name", "semantic_enabled", "updated_at"]
    readonly_fields = ["updated_at"]
    fieldsets = [
        (None, {"fields": ["time_zone", "quiet_hours_start", "quiet_hours_end"]}),
        ("Chat model", {"fields": ["model_base_url", "model_name", "model_api_key"]}),
        (
            "Limits",
            {
                "fields": [
                    "daily_ai_requests",
                    "daily_scheduled_ai_requests",
                    "daily_embedding_requests",
                    "max_steps_per_turn",
                    "max_tool_calls_per_turn",
                    "max_output_tokens",
                    "max_context_tokens",
                ]
            },
        ),
        (
            "Semantic recall",
            {
                "fields": [
                    "semantic_enabled",
                    "embeddings_base_url",
                    "embeddings_model",
                    "embeddings_api_key",
                ]
            },
        ),
        (None, {"fields": ["updated_at"]}),
    ]

    def _settings(self, data: dict[str, Any]) -> dict[str, Any]:
        # An empty key field keeps the stored key (the page never shows it); a new provider URL
        # without a key still clears the old one, as owner_settings_update does for the owner.
        return {k: v for k, v in data.items() if v or k not in KEY_FIELDS}

    def service_create(self, request: HttpRequest, data: dict[str, Any]) -> OwnerSettings:
        services.owner_settings_get()  # the one row (a database constraint)
        return services.owner_settings_update(**self._settings(data))

    def service_update(
        self, request: HttpRequest, obj: OwnerSettings, changes: dict[str, Any]
    ) -> None:
        services.owner_settings_update(**self._settings(changes))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return not OwnerSettings.objects.exists()

    def has_delete_permission(self, request: HttpRequest, obj: OwnerSettings | None = None) -> bool:
        return False


@admin.register(UsageDay)
class UsageDayAdmin(ReadOnlyAdmin):
    """The day's counters against the budgets: reserved by usage_reserve with a conditional
    update before each request; a hand edit would hand out or take away budget unseen."""

    list_display = [
        "day",
        "ai_requests",
        "scheduled_ai_requests",
        "embedding_requests",
        "input_tokens",
        "output_tokens",
    ]
    date_hierarchy = "day"


@admin.register(Change)
class ChangeAdmin(ReadOnlyAdmin):
    """The change log (talorys/workspace/history.py): written in the transaction of each change,
    and reverted from the owner's pages or the API, never edited here."""

    list_display = ["created_at", "kind", "object_id", "action", "title", "source", "reverts"]
    list_filter = ["kind", "action"]
    search_fields = ["title", "source"]
    list_select_related = ["reverts"]
    date_hierarchy = "created_at"
