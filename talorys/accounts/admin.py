"""The operator's view of API tokens: made, changed and revoked through the services, audited
(``talorys.audit``), never deleted by hand (revoking keeps the record of what it did). And of the
accounts: Django's user admin, which shows which account is the owner and refuses to make a
second superuser, saying why (owner.py)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.forms import AdminUserCreationForm, UserChangeForm, UsernameField
from django.contrib.auth.models import User
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from talorys.accounts.models import ApiToken
from talorys.accounts.owner import is_the_owner, one_owner_message, the_owner
from talorys.accounts.services import api_token_create, api_token_revoke, api_token_update
from talorys.web.service_admin import ServiceAdmin


@admin.register(ApiToken)
class ApiTokenAdmin(ServiceAdmin):
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

    def get_readonly_fields(self, request: HttpRequest, obj: ApiToken | None = None) -> list[str]:
        # A token belongs to the account it was made for; a revoked one stays as it was.
        fixed = [*self.readonly_fields, "user"] if obj is not None else self.readonly_fields
        return [*fixed, "name", "scope"] if obj is not None and obj.revoked_at else list(fixed)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # revoke instead

    def service_create(self, request: HttpRequest, data: dict[str, Any]) -> ApiToken:
        token, raw = api_token_create(**data, actor=self.actor(request))
        request._talorys_raw_token = raw  # type: ignore[attr-defined]
        return token

    def service_update(self, request: HttpRequest, obj: ApiToken, changes: dict[str, Any]) -> None:
        api_token_update(
            user=obj.user,
            token_id=obj.pk,
            name=changes.get("name", obj.name),
            scope=changes.get("scope", obj.scope),
            actor=self.actor(request),
        )

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
            api_token_revoke(user=token.user, token_id=token.pk, actor=self.actor(request))
        self.message_user(request, "Selected tokens revoked.")


class OneOwnerForm(forms.ModelForm):
    """Refuses the superuser flag for any account but the owner, with the reason (the database
    would refuse it too, without one)."""

    def clean_is_superuser(self) -> bool:
        wanted = bool(self.cleaned_data.get("is_superuser"))
        owner = the_owner()
        if wanted and owner is not None and owner.pk != self.instance.pk:
            raise forms.ValidationError(one_owner_message(owner), code="one_owner")
        return wanted


class OwnerUserChangeForm(OneOwnerForm, UserChangeForm):
    pass


class OwnerUserCreationForm(OneOwnerForm, AdminUserCreationForm):
    class Meta:  # UserCreationForm's, with the flag: refused here, not silently dropped
        model = User
        fields = ("username", "is_superuser")
        field_classes = {"username": UsernameField}


ONE_OWNER_NOTE = (
    "Talorys has one owner, the install's one superuser. An account added here cannot sign in "
    "to the app, the API or the admin, and cannot be made a superuser."
)

admin.site.unregister(User)


@admin.register(User)
class OwnerUserAdmin(UserAdmin):
    form = OwnerUserChangeForm
    add_form = OwnerUserCreationForm
    add_fieldsets = (
        (
            None,
            {
                "classes": ("wide",),
                "description": ONE_OWNER_NOTE,
                "fields": ("username", "usable_password", "password1", "password2", "is_superuser"),
            },
        ),
    )
    list_display = ("username", "owner", "is_active", "last_login")

    @admin.display(boolean=True, description="The owner")
    def owner(self, obj: User) -> bool:
        return is_the_owner(obj)
