"""The admin site, whose login shares the owner's login throttle."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.admin import AdminSite
from django.contrib.admin.forms import AdminAuthenticationForm
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from talorys.accounts.services import owner_authenticate
from talorys.lib.errors import (
    RateLimited,
    Unauthorized,
)


class OwnerAdminLoginForm(AdminAuthenticationForm):
    """The admin's login form, under the same throttle as the owner's login (owner_authenticate).

    The owner is a superuser, so without it /admin/login/ would be an unthrottled way to guess
    the owner's password.
    """

    retry_after: int | None = None

    def clean(self) -> dict[str, Any]:
        username = self.cleaned_data.get("username")
        password = self.cleaned_data.get("password")
        if username is not None and password:
            if self.request is None:  # the admin's login view always passes its request
                raise self.get_invalid_login_error()
            try:
                self.user_cache = owner_authenticate(
                    request=self.request, username=username, password=password
                )
            except RateLimited as exc:
                self.retry_after = exc.retry_after
                raise forms.ValidationError(exc.message, code="throttled") from exc
            except Unauthorized as exc:
                raise self.get_invalid_login_error() from exc
            self.confirm_login_allowed(self.user_cache)
        return self.cleaned_data


class OwnerAdminSite(AdminSite):
    """The admin site (talorys.apps.OwnerAdminConfig): a throttled login answers 429 with
    Retry-After, as the API and /login/ do."""

    login_form = OwnerAdminLoginForm

    def login(self, request: HttpRequest, extra_context: dict | None = None) -> HttpResponse:
        response = super().login(request, extra_context)
        form = (
            (response.context_data or {}).get("form")
            if isinstance(response, TemplateResponse)
            else None
        )
        retry_after = getattr(form, "retry_after", None)
        if retry_after:
            response.status_code = RateLimited.status
            response["Retry-After"] = str(retry_after)
        return response
