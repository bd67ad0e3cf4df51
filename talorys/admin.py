"""Django admin for the owner's core data: the operator's view to inspect and repair records."""

from __future__ import annotations

from django import forms
from django.contrib import admin
from django.db.models import Count, Q, QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils import timezone

from talorys import services
from talorys.errors import ValidationFailed
from talorys.models import (
    ApiToken,
    Note,
    Notification,
    OwnerSettings,
    Project,
    PushDelivery,
    PushSubscription,
    Task,
    UsageDay,
)
from talorys.security import api_token_create, api_token_revoke


class DeletedFilter(admin.SimpleListFilter):
    """Soft-deleted rows (the approvals bin) are hidden from the owner but not from the operator."""

    title = "deleted"
    parameter_name = "deleted"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:
        return [("no", "Live"), ("yes", "In the bin")]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        if self.value() == "no":
            return queryset.filter(deleted_at__isnull=True)
        if self.value() == "yes":
            return queryset.filter(deleted_at__isnull=False)
        return queryset


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ["name", "open_tasks", "updated_at", "deleted_at"]
    list_filter = [DeletedFilter]
    search_fields = ["name", "description"]
    readonly_fields = ["created_at", "updated_at"]

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return (
            super()
            .get_queryset(request)
            .annotate(_open=Count("tasks", filter=Q(tasks__status=Task.Status.OPEN)))
        )

    @admin.display(description="open tasks", ordering="_open")
    def open_tasks(self, obj: Project) -> int:
        return obj._open


@admin.register(Task)
class TaskAdmin(admin.ModelAdmin):
    list_display = ["title", "status", "priority", "due_at", "project", "updated_at"]
    list_filter = [
        "status",
        "priority",
        "project",
        DeletedFilter,
        ("due_at", admin.DateFieldListFilter),
    ]
    search_fields = ["title", "details"]
    list_select_related = ["project"]
    autocomplete_fields = ["project"]
    date_hierarchy = "due_at"
    readonly_fields = ["created_at", "updated_at"]


@admin.register(Note)
class NoteAdmin(admin.ModelAdmin):
    list_display = ["title", "length", "updated_at", "deleted_at"]
    list_filter = [DeletedFilter]
    search_fields = ["title", "content"]
    readonly_fields = ["created_at", "updated_at"]

    @admin.display(description="characters")
    def length(self, obj: Note) -> int:
        return len(obj.content)


@admin.register(Notification)
class NotificationAdmin(admin.ModelAdmin):
    list_display = ["title", "kind", "source", "created_at", "read_at"]
    list_filter = ["kind", ("read_at", admin.EmptyFieldListFilter), "created_at"]
    search_fields = ["title", "body", "source"]
    readonly_fields = ["created_at"]
    date_hierarchy = "created_at"
    actions = ["mark_read"]

    @admin.action(description="Mark selected notifications as read")
    def mark_read(self, request: HttpRequest, queryset: QuerySet) -> None:
        count = queryset.filter(read_at__isnull=True).update(read_at=timezone.now())
        self.message_user(request, f"{count} notification(s) marked as read.")


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

    def clean(self) -> dict:
        cleaned = super().clean()
        try:
            services.owner_settings_check(
                **{k: v for k, v in cleaned.items() if k in services.SETTINGS_FIELDS}
            )
        except ValidationFailed as exc:
            raise forms.ValidationError(exc.message) from exc
        return cleaned


@admin.register(OwnerSettings)
class OwnerSettingsAdmin(admin.ModelAdmin):
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

    def save_model(
        self, request: HttpRequest, obj: OwnerSettings, form: forms.ModelForm, change: bool
    ) -> None:
        if change:
            stored = OwnerSettings.objects.get(pk=obj.pk)
            for name in KEY_FIELDS:
                if not form.cleaned_data.get(name):
                    setattr(obj, name, getattr(stored, name))
        obj.pk = 1  # the one row (a database constraint)
        super().save_model(request, obj, form, change)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return not OwnerSettings.objects.exists()

    def has_delete_permission(self, request: HttpRequest, obj: OwnerSettings | None = None) -> bool:
        return False


@admin.register(UsageDay)
class UsageDayAdmin(admin.ModelAdmin):
    list_display = [
        "day",
        "ai_requests",
        "scheduled_ai_requests",
        "embedding_requests",
        "input_tokens",
        "output_tokens",
    ]
    date_hierarchy = "day"


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ["name", "prefix", "scope", "user", "created_at", "last_used_at", "revoked_at"]
    list_filter = ["scope", ("revoked_at", admin.EmptyFieldListFilter)]
    search_fields = ["name", "prefix"]
    list_select_related = ["user"]
    readonly_fields = ["prefix", "token_hash", "created_at", "last_used_at", "revoked_at"]
    actions = ["revoke"]

    def get_fields(self, request: HttpRequest, obj: ApiToken | None = None) -> list[str]:
        if obj is None:
            return ["user", "name", "scope"]  # the secret is made by api_token_create
        return ["user", "name", "scope", *self.readonly_fields]

    def save_model(
        self, request: HttpRequest, obj: ApiToken, form: forms.ModelForm, change: bool
    ) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        token, raw = api_token_create(user=obj.user, name=obj.name, scope=obj.scope)
        # The admin goes on with ``obj`` (log entry, redirect): make it the token just made.
        obj.pk, obj.prefix, obj.token_hash, obj.created_at = (
            token.pk,
            token.prefix,
            token.token_hash,
            token.created_at,
        )
        obj._state.adding = False
        request._talorys_raw_token = raw  # type: ignore[attr-defined]

    def response_add(
        self, request: HttpRequest, obj: ApiToken, post_url_continue: str | None = None
    ) -> HttpResponse:
        # Shown once on this page, never put in a message: messages travel in a cookie.
        context = {
            **self.admin_site.each_context(request),
            "title": "Token created",
            "opts": self.opts,
            "token": obj,
            "raw": request._talorys_raw_token,  # type: ignore[attr-defined]
        }
        return TemplateResponse(request, "admin/talorys/apitoken/created.html", context)

    @admin.action(description="Revoke selected tokens")
    def revoke(self, request: HttpRequest, queryset: QuerySet) -> None:
        for token in queryset.filter(revoked_at__isnull=True):
            api_token_revoke(user=token.user, token_id=token.pk)
        self.message_user(request, "Selected tokens revoked.")


@admin.register(PushSubscription)
class PushSubscriptionAdmin(admin.ModelAdmin):
    list_display = ("id", "endpoint", "active", "created_at", "last_success_at", "deactivated_at")
    list_filter = ("active",)
    search_fields = ("endpoint", "user_agent")
    readonly_fields = ("p256dh", "auth", "created_at", "last_success_at", "deactivated_at")


@admin.register(PushDelivery)
class PushDeliveryAdmin(admin.ModelAdmin):
    list_display = (
        "id",
        "notification",
        "subscription",
        "status",
        "attempts",
        "status_code",
        "sent_at",
    )
    list_filter = ("status",)
    search_fields = ("error", "notification__title")
    list_select_related = ("notification", "subscription")
    readonly_fields = ("created_at", "updated_at", "sent_at")
