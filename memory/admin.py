"""Django admin for memories. Saves go through memory/services.py, so an operator's repair is
recorded in the memory's history like any other change.
"""

from __future__ import annotations

from django import forms
from django.contrib import admin
from django.http import HttpRequest

from memory import services
from memory.models import Memory, MemoryRevision
from talorys.errors import ValidationFailed


class MemoryRevisionInline(admin.TabularInline):
    model = MemoryRevision
    fields = ["created_at", "action", "source", "category", "text"]
    readonly_fields = fields
    extra = 0
    can_delete = False
    ordering = ["-created_at", "-id"]

    def has_add_permission(self, request: HttpRequest, obj: Memory | None = None) -> bool:
        return False


class MemoryForm(forms.ModelForm):
    class Meta:
        model = Memory
        fields = ["text", "category"]

    def clean_text(self) -> str:
        try:
            return services.clean_memory_text(self.cleaned_data.get("text"))
        except ValidationFailed as exc:
            raise forms.ValidationError(exc.message) from exc


@admin.register(Memory)
class MemoryAdmin(admin.ModelAdmin):
    form = MemoryForm
    list_display = ["__str__", "category", "source", "revision_count", "updated_at", "deleted_at"]
    list_filter = ["category", "source", ("deleted_at", admin.EmptyFieldListFilter)]
    search_fields = ["text"]
    date_hierarchy = "updated_at"
    readonly_fields = ["source", "created_at", "updated_at", "deleted_at"]
    inlines = [MemoryRevisionInline]

    @admin.display(description="revisions")
    def revision_count(self, obj: Memory) -> int:
        return obj.revisions.count()

    def save_model(
        self, request: HttpRequest, obj: Memory, form: forms.ModelForm, change: bool
    ) -> None:
        # The operator acts for the owner.
        if change:
            services.memory_update(memory_id=obj.pk, text=obj.text, category=obj.category)
        else:
            obj.pk = services.memory_create(text=obj.text, category=obj.category).pk
        # The admin goes on with ``obj`` (inlines, log entry, redirect): load what was saved.
        obj.refresh_from_db()
        obj._state.adding = False

    def has_change_permission(self, request: HttpRequest, obj: Memory | None = None) -> bool:
        # A memory in the bin is restored through approvals, not edited here.
        if obj is not None and obj.deleted_at is not None:
            return False
        return super().has_change_permission(request, obj)

    def delete_model(self, request: HttpRequest, obj: Memory) -> None:
        services.memory_delete(memory_id=obj.pk)


@admin.register(MemoryRevision)
class MemoryRevisionAdmin(admin.ModelAdmin):
    """The history of every memory, searchable across memories. Written by the code only."""

    list_display = ["memory_id", "action", "text", "category", "source", "created_at"]
    list_filter = ["action", "source", "category"]
    search_fields = ["text"]
    date_hierarchy = "created_at"

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
