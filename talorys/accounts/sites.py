"""The admin site, whose login shares the owner's login throttle, and the operator's own pages."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django import forms
from django.contrib.admin import AdminSite
from django.contrib.admin.forms import AdminAuthenticationForm
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import URLPattern, URLResolver, path, reverse

from talorys.accounts.owner import is_the_owner
from talorys.accounts.services import owner_authenticate, owner_session_key_renew
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
            # Django's LoginView logs in next, and keeps the key of a session already logged in.
            owner_session_key_renew(request=self.request)
        return self.cleaned_data


# The admin's sections in the order an operator looks for them: the owner's data first, then
# what acts on it, then the machinery and the accounts. Within a section, models in this order;
# anything not named comes after, alphabetically, as Django lists it.
SECTIONS: dict[str, list[str]] = {
    "workspace": ["Task", "Project", "Note"],
    "memory": ["Memory", "MemoryRevision", "RecallEntry", "IndexState"],
    "automations": ["Automation", "AutomationRun"],
    "approvals": ["PendingAction", "ApprovalEvent"],
    "agent": ["Conversation", "Message"],
    "files": ["File"],
    "history": ["Change"],
    "owner": ["OwnerSettings", "UsageDay"],
    "notifications": ["Notification", "PushSubscription", "PushDelivery"],
    # Setup runs, heartbeats, system jobs (talorys/ops), and the pages admin_page_register adds.
    "ops": ["SetupRun", "Heartbeat", "SystemJob"],
    "accounts": ["ApiToken"],
    "auth": ["User", "Group"],
}


@dataclass(frozen=True)
class AdminPage:
    """A read-only page of the operator's that is not a model's list (e.g. the activity counts)."""

    route: str  # under /admin/, e.g. "activity/"
    name: str  # its URL name in the admin's namespace
    title: str
    view: Callable[[HttpRequest], HttpResponse]


_PAGES: dict[str, AdminPage] = {}


def admin_page_register(page: AdminPage) -> None:
    """Add a page to the admin, listed under "Operations". Called by a higher app's admin.py
    (automations' activity counts read every app): this site may not import them."""
    _PAGES[page.name] = page


def _place(order: list[str], name: str) -> tuple[int, str]:
    return (order.index(name) if name in order else len(order), name)


class OwnerAdminSite(AdminSite):
    """The admin site (talorys.accounts.apps.OwnerAdminConfig): a throttled login answers 429 with
    Retry-After, as the API and /login/ do. Its sections are grouped as ``SECTIONS`` says."""

    login_form = OwnerAdminLoginForm
    site_header = "Talorys administration"
    site_title = "Talorys admin"
    index_title = "The operator's view: inspect and repair"

    def has_permission(self, request: HttpRequest) -> bool:
        # Django lets any staff account in; here only the owner operates the install. (The
        # session middleware already ends other accounts' sessions: this holds without it.)
        return super().has_permission(request) and is_the_owner(request.user)

    def get_app_list(self, request: HttpRequest, app_label: str | None = None) -> list[Any]:
        apps = super().get_app_list(request, app_label)
        if app_label is None and _PAGES:
            ops = next((app for app in apps if app["app_label"] == "ops"), None)
            if ops is None:
                apps.append(self._operations())
            else:  # one "Operations" section: the ops app's models, then the pages
                ops["models"].extend(self._operations()["models"])
        labels = list(SECTIONS)
        apps.sort(key=lambda app: _place(labels, app["app_label"]))
        for app in apps:
            order = SECTIONS.get(app["app_label"], [])
            app["models"].sort(key=lambda model: _place(order, model["object_name"]))
        return apps

    def _operations(self) -> dict[str, Any]:
        """The registered pages as a section of the index and the sidebar, in the shape of
        Django's own (AdminSite.get_app_list)."""
        pages = [
            {
                "name": page.title,
                "object_name": page.name,
                "admin_url": reverse(f"{self.name}:{page.name}"),
                "add_url": None,
                "view_only": True,
                "perms": {"view": True},
            }
            for page in _PAGES.values()
        ]
        return {
            "name": "Operations",
            "app_label": "ops",
            "app_url": pages[0]["admin_url"],
            "has_module_perms": True,
            "models": pages,
        }

    def get_urls(self) -> list[URLResolver | URLPattern]:
        # Before Django's own: its last pattern catches every path left over.
        pages = [
            path(page.route, self.admin_view(page.view), name=page.name) for page in _PAGES.values()
        ]
        return pages + super().get_urls()

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
