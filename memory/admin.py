"""Django admin for memories. Saves go through memory/services.py, so an operator's repair is
recorded in the memory's history like any other change.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.db.models import Count, QuerySet
from django.http import HttpRequest

from memory import services
from memory.models import IndexState, Memory, MemoryRevision, RecallEntry
from talorys.lib.errors import ValidationFailed
from talorys.lib.readonly_admin import ReadOnlyAdmin
from talorys.workspace.admin import ServiceAdmin


class MemoryRevisionInline(admin.TabularInline):
    model = MemoryRevision
    fields = readonly_fields = (
        "created_at",
        "action",
        "actor",
        "conversation_id",
        "message_id",
        "category",
        "text",
        "valid_from",
        "valid_to",
        "superseded_by",
    )
    extra = 0
    can_delete = False
    ordering = ["-created_at", "-id"]

    def has_add_permission(self, request: HttpRequest, obj: Memory | None = None) -> bool:
        return False


class MemoryForm(forms.ModelForm):
    class Meta:
        model = Memory
        fields = ["text", "category", "valid_from", "valid_to"]

    def clean_text(self) -> str:
        try:
            return services.clean_memory_text(self.cleaned_data.get("text"))
        except ValidationFailed as exc:
            raise forms.ValidationError(exc.message) from exc


@admin.register(Memory)
class MemoryAdmin(ServiceAdmin):
    form = MemoryForm
    list_display = [
        "__str__",
        "category",
        "source",
        "superseded_by",
        "revision_count",
        "updated_at",
    ]
    list_filter = ["category", "source"]
    search_fields = ["text"]
    date_hierarchy = "updated_at"
    readonly_fields = [
        "source",
        "superseded_by",
        "superseded_at",
        "conflicts_with",
        "created_at",
        "updated_at",
        "deleted_at",
    ]
    inlines = [MemoryRevisionInline]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Memory]:
        return super().get_queryset(request).annotate(_revisions=Count("revisions"))

    @admin.display(description="revisions", ordering="_revisions")
    def revision_count(self, obj: Memory) -> int:
        # get_queryset's annotation: an attribute of the row that the model does not declare.
        return vars(obj)["_revisions"]

    # The operator acts for the owner; each service call records a revision.
    def service_create(self, request: HttpRequest, data: dict[str, Any]) -> Memory:
        return services.memory_create(**data, actor=self.actor(request))

    def service_update(self, request: HttpRequest, obj: Memory, changes: dict[str, Any]) -> None:
        services.memory_update(memory_id=obj.pk, **changes, actor=self.actor(request))

    def service_delete(self, request: HttpRequest, obj: Memory) -> None:
        services.memory_delete(memory_id=obj.pk, actor=self.actor(request))


@admin.register(MemoryRevision)
class MemoryRevisionAdmin(ReadOnlyAdmin):
    """The history of every memory, searchable across memories. Written by the code only."""

    list_display = ["memory_id", "action", "text", "category", "actor", "created_at"]
    list_filter = ["action", "source", "category"]
    search_fields = ["text"]
    date_hierarchy = "created_at"


@admin.register(RecallEntry)
class RecallEntryAdmin(ReadOnlyAdmin):
    """The recall index, for inspection: derived data, rebuilt by manage.py talorys_reindex."""

    list_display = ["kind", "object_id", "title", "live", "vector_model", "vector_dim", "seq"]
    list_filter = ["kind", "live", "vector_model"]
    search_fields = ["title", "text"]
    exclude = ["vector"]


@admin.register(IndexState)
class IndexStateAdmin(ReadOnlyAdmin):
    list_display = ["__str__", "generation", "purged_upto", "recent_since", "last_full_at"]
