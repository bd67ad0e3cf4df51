"""The operator's view of API tokens: made and revoked through the services."""

from __future__ import annotations

from django import forms
from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from talorys.accounts.models import ApiToken
from talorys.accounts.services import api_token_create, api_token_revoke


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ["name", "prefix", "scope", "user", "created_at", "last_used_at", "revoked_at"]
    list_filter = ["scope", ("revoked_at", admin.EmptyFieldListFilter)]
    search_fields = ["name", "prefix"]
    list_select_related = ["user"]
    readonly_fields = ["prefix", "token_hash", "created_at", "last_used_at", "revoked_at"]
    actions = ["revoke"]

    def get_fields(self, request: HttpRequest, obj: ApiToken | None = None) -> tuple[str, ...]:
        if obj is None:
            return ("user", "name", "scope")  # the secret is made by api_token_create
        return ("user", "name", "scope", *self.readonly_fields)

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
        return TemplateResponse(request, "admin/accounts/apitoken/created.html", context)

    @admin.action(description="Revoke selected tokens")
    def revoke(self, request: HttpRequest, queryset: QuerySet) -> None:
        for token in queryset.filter(revoked_at__isnull=True):
            api_token_revoke(user=token.user, token_id=token.pk)
        self.message_user(request, "Selected tokens revoked.")
