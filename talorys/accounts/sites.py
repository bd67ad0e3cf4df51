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


# The admin's sections in the order an operator looks for them: the owner's data first, then
# what acts on it, then the machinery and the accounts. Within a section, models in this order;
# anything not named comes after, alphabetically, as Django lists it.
SECTIONS: dict[str, list[str]] = {
    "workspace": ["Task", "Project", "Note", "Change", "OwnerSettings", "UsageDay"],
    "memory": ["Memory", "MemoryRevision", "RecallEntry", "IndexState"],
    "automations": ["Automation", "AutomationRun"],
    "approvals": ["PendingAction", "ApprovalEvent"],
    "agent": ["Conversation", "Message"],
    "notifications": ["Notification", "PushSubscription", "PushDelivery"],
    "accounts": ["ApiToken"],
    "auth": ["User", "Group"],
}


def _place(order: list[str], name: str) -> tuple[int, str]:
    return (order.index(name) if name in order else len(order), name)


class OwnerAdminSite(AdminSite):
    """The admin site (talorys.apps.OwnerAdminConfig): a throttled login answers 429 with
    Retry-After, as the API and /login/ do. Its sections are grouped as ``SECTIONS`` says."""

    login_form = OwnerAdminLoginForm
    site_header = "Talorys administration"
    site_title = "Talorys admin"
    index_title = "The operator's view: inspect and repair"

    def get_app_list(self, request: HttpRequest, app_label: str | None = None) -> list[Any]:
        apps = super().get_app_list(request, app_label)
        labels = list(SECTIONS)
        apps.sort(key=lambda app: _place(labels, app["app_label"]))
        for app in apps:
            order = SECTIONS.get(app["app_label"], [])
            app["models"].sort(key=lambda model: _place(order, model["object_name"]))
        return apps

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
