"""Django admin for the owner's settings (through the settings service, with its checks) and
the day's usage (read only)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.http import HttpRequest

from talorys.lib.errors import ValidationFailed
from talorys.owner.models import SETTINGS_BOUNDS, OwnerSettings, UsageDay
from talorys.owner.selectors import owner_settings_get
from talorys.owner.services.settings import (
    SETTINGS_FIELDS,
    owner_settings_check,
    owner_settings_update,
)
from talorys.web.readonly_admin import ReadOnlyAdmin
from talorys.web.service_admin import ServiceAdmin

KEY_FIELDS = ("model_api_key", "embeddings_api_key")


class OwnerSettingsForm(forms.ModelForm):
    class Meta:
        model = OwnerSettings
        fields = sorted(SETTINGS_FIELDS)
        # Keys are write-only here too: the page never sends a stored key back to the browser.
        widgets = {name: forms.PasswordInput(render_value=False) for name in KEY_FIELDS}
        help_texts = {
            name: "Leave empty to keep the stored key; clear it from the owner's settings page."
            for name in KEY_FIELDS
        }

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or self.cleaned_data
        try:
            owner_settings_check(**{k: v for k, v in cleaned.items() if k in SETTINGS_FIELDS})
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
        ("Limits", {"fields": list(SETTINGS_BOUNDS)}),
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
        ("Calendar feed", {"fields": ["calendar_feed_details"]}),
        (None, {"fields": ["updated_at"]}),
    ]

    def _settings(self, data: dict[str, Any]) -> dict[str, Any]:
        # An empty key field keeps the stored key (the page never shows it); a new provider URL
        # without a key still clears the old one, as owner_settings_update does for the owner.
        return {k: v for k, v in data.items() if v or k not in KEY_FIELDS}

    def service_create(self, request: HttpRequest, data: dict[str, Any]) -> OwnerSettings:
        owner_settings_get()  # the one row (a database constraint)
        return owner_settings_update(**self._settings(data))

    def service_update(
        self, request: HttpRequest, obj: OwnerSettings, changes: dict[str, Any]
    ) -> None:
        owner_settings_update(**self._settings(changes))

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
