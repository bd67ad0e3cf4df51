"""Django admin for memories. Saves go through memory/services/, so an operator's repair is
recorded in the memory's history like any other change.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import Count, QuerySet
from django.http import HttpRequest, HttpResponse

from memory import services
from memory.conflict import Verdict, conflict_check
from memory.models import IndexState, Memory, MemoryRevision, RecallEntry
from talorys.lib.errors import ValidationFailed
from talorys.web.readonly_admin import ReadOnlyAdmin
from talorys.web.service_admin import ServiceAdmin


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

    def changeform_view(
        self,
        request: HttpRequest,
        object_id: str | None = None,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        # The conflict check is a model request: it runs here, before the transaction the
        # admin's view opens (memory/services/checked.py), and save_model acts on its verdict.
        if request.method == "POST" and not request.POST.get("_saveasnew"):
            request._memory_verdict = self._check_first(request, object_id)  # type: ignore[attr-defined]
        return super().changeform_view(request, object_id, form_url, extra_context)

    def _check_first(self, request: HttpRequest, object_id: str | None) -> Verdict | None:
        """The verdict on the posted text (None: nothing to check, or a form the admin will
        refuse anyway)."""
        obj = self.get_object(request, object_id) if object_id else None
        form = self.get_form(request, obj, change=obj is not None)(request.POST, instance=obj)
        if not form.is_valid() or (obj is not None and "text" not in form.changed_data):
            return None
        text = form.cleaned_data["text"]
        return conflict_check(text=text, exclude_id=obj.pk if obj is not None else None)

    # The operator acts for the owner; each service call records a revision.
    def service_create(self, request: HttpRequest, data: dict[str, Any]) -> Memory:
        result = services.memory_remember(
            **data,
            source=Memory.Source.OWNER,
            actor=self.actor(request),
            verdict=getattr(request, "_memory_verdict", None),
        )
        self._say(request, result)
        return result.memory

    def service_update(self, request: HttpRequest, obj: Memory, changes: dict[str, Any]) -> None:
        result = services.memory_revise(
            memory_id=obj.pk,
            **changes,
            actor=self.actor(request),
            verdict=getattr(request, "_memory_verdict", None),
        )
        self._say(request, result)

    def _say(self, request: HttpRequest, result: services.Remembered) -> None:
        if result.verdict.verdict != "unrelated":
            self.message_user(request, services.remembered_note(result), messages.WARNING)

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
