"""Django admin for automations. Edits go through automations/services/crud.py like the API's, so a
new schedule re-arms ``next_run_at`` and voids queued runs; the dispatcher's bookkeeping and the
run receipts are read-only here.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from automations.models import Automation, AutomationRun
from automations.services import crud
from talorys.lib.readonly_admin import ReadOnlyAdmin
from talorys.workspace.admin import ServiceAdmin


class AutomationRunInline(admin.TabularInline):
    model = AutomationRun
    extra = 0
    can_delete = False
    fields = ("slot", "status", "started_at", "finished_at", "result", "error")
    readonly_fields = fields
    ordering = ("-slot",)
    show_change_link = True

    def has_add_permission(self, request: HttpRequest, obj: Automation | None = None) -> bool:
        return False


@admin.register(Automation)
class AutomationAdmin(ServiceAdmin):
    list_display = (
        "name",
        "kind",
        "enabled",
        "origin",
        "next_run_at",
        "run_count",
        "last_status",
        "cancelled_at",
    )
    list_filter = ("kind", "enabled", "origin", "last_status")
    search_fields = ("name", "message")
    # The dispatcher's bookkeeping: editing it by hand would break the one-run-per-slot rule.
    # next_run_at follows the schedule and the enabled switch (the services re-arm it).
    readonly_fields = (
        "origin",
        "next_run_at",
        "version",
        "armed_time_zone",
        "run_count",
        "last_run_at",
        "last_status",
        "last_result",
        "last_error",
        "cancelled_at",
        "deleted_at",
        "created_at",
        "updated_at",
    )
    fields = ("name", "kind", "message", "schedule", "enabled", *readonly_fields)
    inlines = [AutomationRunInline]

    def get_readonly_fields(self, request: HttpRequest, obj: Automation | None = None) -> Any:
        # What an automation does is fixed once made (automation_update keeps its kind).
        return ("kind", *self.readonly_fields) if obj is not None else self.readonly_fields

    def service_create(self, request: HttpRequest, data: dict[str, Any]) -> Automation:
        return crud.automation_create(**data, actor=self.actor(request))

    def service_update(
        self, request: HttpRequest, obj: Automation, changes: dict[str, Any]
    ) -> None:
        edits = {name: value for name, value in changes.items() if name in crud.UPDATABLE}
        if edits:
            crud.automation_update(automation_id=obj.pk, **edits, actor=self.actor(request))
        if "enabled" in changes:
            switch = crud.automation_resume if changes["enabled"] else crud.automation_pause
            switch(automation_id=obj.pk, actor=self.actor(request))

    def service_delete(self, request: HttpRequest, obj: Automation) -> None:
        crud.automation_delete(automation_id=obj.pk, actor=self.actor(request))


@admin.register(AutomationRun)
class AutomationRunAdmin(ReadOnlyAdmin):
    """The receipts of runs: written by the dispatcher and the run only (one per slot)."""

    list_display = ("automation", "slot", "status", "started_at", "finished_at")
    list_filter = ("status",)
    search_fields = ("automation__name", "result", "error")
    list_select_related = ("automation",)
    date_hierarchy = "slot"
