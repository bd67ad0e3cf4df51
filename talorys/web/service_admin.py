"""Admins whose writes go through the app's services (the admin is an edge too), and the marking
of rows in the bin: the bases every app's admin.py builds on (talorys/workspace/admin.py,
memory/, agent/, automations/). Only Django and talorys.lib here, so any app may use them.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db import models, transaction
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.text import capfirst

from talorys.lib.actors import Actor
from talorys.lib.errors import AppError


class DeletedFilter(admin.SimpleListFilter):
    """Rows in the bin are hidden from the owner but not from the operator."""

    title = "in the bin"
    parameter_name = "deleted"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:
        return [("no", "Live"), ("yes", "In the bin")]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        if self.value() in ("no", "yes"):
            return queryset.filter(deleted_at__isnull=self.value() == "no")
        return queryset


def _has_bin(model: type[models.Model]) -> bool:
    return any(field.name == "deleted_at" for field in model._meta.concrete_fields)


def _field_named_in(error: AppError, fields: dict[str, Any]) -> str | None:
    """The form field a service's refusal is about, as it names it in ``details["field"]`` (the
    API's name: a form's ``project`` is the API's ``project_id``), or None for the whole form."""
    details = error.details if isinstance(error.details, dict) else {}
    name = str(details.get("field", ""))
    for candidate in (name, name.removesuffix("_id")):
        if candidate in fields:
            return candidate
    return None


class _RefusedByService:
    """Mixed into the admin's form when a service refused what was posted: shows why."""

    service_error = AppError("")

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()  # type: ignore[misc]
        field = _field_named_in(self.service_error, self.fields)  # type: ignore[attr-defined]
        self.add_error(field, self.service_error.message)  # type: ignore[attr-defined]
        return cleaned


class BinAdmin(admin.ModelAdmin):
    """Deleting calls the app's service, one object at a time, from the delete page and from the
    "delete selected" action alike (subclasses implement ``service_delete``). Rows in the bin
    show as such, with a filter, and are read-only here: they come back through the bin.
    """

    def service_delete(self, request: HttpRequest, obj: Any) -> None:
        raise NotImplementedError

    def actor(self, request: HttpRequest) -> Actor:
        """Who the change log and the bin name for the operator's changes."""
        return Actor(source=f"admin:{request.user.get_username()}"[:100])

    # --- lists ---------------------------------------------------------------------------------

    def get_list_display(self, request: HttpRequest) -> list[Any]:
        shown = list(super().get_list_display(request))
        return [*shown, "in_the_bin"] if _has_bin(self.model) else shown

    def get_list_filter(self, request: HttpRequest) -> list[Any]:
        filters = list(super().get_list_filter(request))
        if _has_bin(self.model) and DeletedFilter not in filters:
            filters.append(DeletedFilter)
        return filters

    @admin.display(description="in the bin", boolean=True, ordering="deleted_at")
    def in_the_bin(self, obj: Any) -> bool:
        return obj.deleted_at is not None

    def _binned(self, obj: Any) -> bool:
        return obj is not None and _has_bin(self.model) and obj.deleted_at is not None

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return not self._binned(obj) and super().has_change_permission(request, obj)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return not self._binned(obj) and super().has_delete_permission(request, obj)

    # --- deleting ------------------------------------------------------------------------------

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        self.service_delete(request, obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet) -> None:
        """What Django's "delete selected" action calls once confirmed: the service per object."""
        refused = []
        for obj in queryset:
            try:
                # A savepoint each: one refusal does not undo the others.
                with transaction.atomic():
                    self.service_delete(request, obj)
            except AppError as exc:
                refused.append(f"{obj}: {exc.message}")
        if refused:
            self.message_user(request, "Not deleted: " + " ".join(refused), messages.WARNING)

    def delete_view(
        self, request: HttpRequest, object_id: str, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        try:
            return super().delete_view(request, object_id, extra_context)
        except AppError as exc:  # the admin's transaction rolled the attempt back
            self.message_user(request, exc.message, messages.ERROR)
            opts = self.opts
            return HttpResponseRedirect(
                reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist")
            )

    def get_deleted_objects(
        self, objs: Any, request: HttpRequest
    ) -> tuple[list[str], dict[str, int], set[str], list[str]]:
        # The confirmation lists what the service deletes, each object to the bin with what
        # belongs to it, not the cascade a plain SQL delete would run.
        objs = list(objs)
        name = capfirst(self.opts.verbose_name)
        return (
            [f"{name}: {obj}" for obj in objs],
            {str(self.opts.verbose_name_plural): len(objs)},
            set(),
            [],
        )


class ServiceAdmin(BinAdmin):
    """An admin whose writes go through the app's services, like the API's (the admin is an
    edge too): subclasses implement ``service_create`` and ``service_update`` (given the form's
    cleaned data, only the changed fields on an edit) and ``service_delete``. A service's
    refusal (any AppError) is shown on the form, and nothing of the attempt is kept.
    """

    def service_create(self, request: HttpRequest, data: dict[str, Any]) -> models.Model:
        raise NotImplementedError

    def service_update(self, request: HttpRequest, obj: Any, changes: dict[str, Any]) -> None:
        raise NotImplementedError

    def save_model(
        self, request: HttpRequest, obj: Any, form: forms.ModelForm, change: bool
    ) -> None:
        if change:
            changes = {name: form.cleaned_data[name] for name in form.changed_data}
            if changes:
                self.service_update(request, obj, changes)
        else:
            obj.pk = self.service_create(request, dict(form.cleaned_data)).pk
        # The admin goes on with ``obj`` (inlines, log entry, redirect): make it what was saved.
        obj.refresh_from_db()
        obj._state.adding = False

    def changeform_view(
        self,
        request: HttpRequest,
        object_id: str | None = None,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except AppError as exc:
            # A service refused in save_model; the admin's transaction rolled the attempt back.
            # Show the form again, as posted, with the service's message on it.
            request._talorys_service_error = exc  # type: ignore[attr-defined]
            return super().changeform_view(request, object_id, form_url, extra_context)

    def get_form(
        self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any
    ) -> type[forms.ModelForm]:
        form = super().get_form(request, obj, change, **kwargs)
        error = getattr(request, "_talorys_service_error", None)
        if error is None:
            return form
        return type(form.__name__, (_RefusedByService, form), {"service_error": error})
