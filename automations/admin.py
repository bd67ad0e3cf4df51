"""Django admin for automations. Edits go through automations/services/crud.py like the API's, so a
new schedule re-arms ``next_run_at`` and voids queued runs; the schedule is edited with the owner's
schedule form (automations/forms.py), not as JSON; the dispatcher's bookkeeping and the run
receipts are read-only here.

The automations' schedules are not in django-celery-beat's table, which holds only the project's
system jobs (talorys/ops/admin.py shows them): the dispatcher reads ``Automation.next_run_at``.

The operator's Activity page (counts per day of turns, tool calls, provider errors and runs) is
added to the admin site from here: it reads the agent's data too, which the site may not import.
"""

from __future__ import annotations

import datetime as dt
from typing import Any
from zoneinfo import ZoneInfo

from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.utils import timezone
from django.utils.html import format_html, format_html_join

from agent import selectors as agent_selectors
from agent.models import Message
from automations import selectors
from automations.forms import SCHEDULE_FIELDS, AutomationAdminForm
from automations.models import Automation, AutomationRun
from automations.services import crud
from talorys.accounts.sites import AdminPage, admin_page_register
from talorys.lib.errors import ValidationFailed
from talorys.owner.selectors import owner_zone
from talorys.web.readonly_admin import ReadOnlyAdmin
from talorys.web.service_admin import ServiceAdmin


def _zone(request: HttpRequest) -> ZoneInfo:
    # The owner's settings, which the zone middleware keeps on every signed-in page request.
    owner_settings = getattr(request, "owner_settings", None)
    return ZoneInfo(owner_settings.time_zone) if owner_settings else owner_zone()


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
    form = AutomationAdminForm
    list_display = (
        "name",
        "kind",
        "state",
        "schedule_words",
        "origin",
        "next_run_at",
        "run_count",
        "last_status",
    )
    list_filter = ("kind", "enabled", "origin", "last_status")
    search_fields = ("name", "message")
    # The dispatcher's bookkeeping: editing it by hand would break the one-run-per-slot rule.
    # next_run_at follows the schedule and the enabled switch (the services re-arm it).
    readonly_fields = (
        "upcoming",
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
    fieldsets = (
        (None, {"fields": ("name", "kind", "message", "enabled")}),
        (
            "Schedule",
            {
                "fields": (*SCHEDULE_FIELDS, "upcoming"),
                "description": "In the owner's time zone. Fill in the fields the kind of "
                "schedule needs: once a date and a time, daily a time, weekly days and a time, "
                "monthly a day and a time, cron an expression; the others are ignored.",
            },
        ),
        ("Dispatcher (read-only)", {"fields": readonly_fields[1:]}),
    )
    inlines = [AutomationRunInline]

    @admin.display(description="state")
    def state(self, obj: Automation) -> str:
        # A binned automation keeps ``enabled`` (restore re-arms it) but never runs.
        if obj.deleted_at is not None:
            return "In the bin"
        if obj.cancelled_at is not None:
            return "Cancelled"
        return "Active" if obj.enabled else "Paused"

    @admin.display(description="schedule")
    def schedule_words(self, obj: Automation) -> str:
        return selectors.schedule_text(obj)  # get_list_display gives the list one zone for all

    @admin.display(description="next runs")
    def upcoming(self, obj: Automation) -> str:
        if obj.pk is None:
            return "Shown once saved."
        zone = owner_zone()
        try:
            runs = selectors.schedule_upcoming(schedule=obj.schedule, zone=zone)
        except ValidationFailed as exc:  # an old row's schedule that no longer parses
            return exc.message
        if not runs:
            return "None to come."
        return format_html(
            "<ol>{}</ol>",
            format_html_join(
                "", "<li>{}</li>", ((f"{r.astimezone(zone):%a %d %b %Y %H:%M}",) for r in runs)
            ),
        )

    def get_list_display(self, request: HttpRequest) -> list[Any]:
        zone = _zone(request)  # read once for the whole list, not once per row

        @admin.display(description="schedule")
        def schedule(obj: Automation) -> str:
            return selectors.schedule_text(obj, zone)

        shown = super().get_list_display(request)
        return [schedule if name == "schedule_words" else name for name in shown]

    def get_readonly_fields(self, request: HttpRequest, obj: Automation | None = None) -> Any:
        # What an automation does is fixed once made (automation_update keeps its kind).
        return ("kind", *self.readonly_fields) if obj is not None else self.readonly_fields

    def service_create(self, request: HttpRequest, data: dict[str, Any]) -> Automation:
        arguments = {key: data[key] for key in ("name", "kind", "message", "schedule", "enabled")}
        return crud.automation_create(**arguments, actor=self.actor(request))

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


ACTIVITY_DAYS = 14
_WORDS = {"error": "failed", "streaming": "in progress", "running": "in progress"}
# (key in the selectors' counts, column heading), in the order shown.
ACTIVITY_COLUMNS = [
    *((f"turns_{status}", f"Turns {_WORDS.get(status, status)}") for status in Message.Status),
    ("tool_calls", "Tool calls"),
    ("provider_errors", "Provider errors"),
    *((f"runs_{status}", f"Runs {_WORDS.get(status, status)}") for status in AutomationRun.Status),
]


def activity_view(request: HttpRequest) -> HttpResponse:
    """Counts per day of the last ACTIVITY_DAYS in the owner's zone, newest first: two aggregate
    queries, however busy the days were. Read-only."""
    zone = _zone(request)
    today = timezone.localdate(timezone=zone)
    days = [today - dt.timedelta(days=back) for back in range(ACTIVITY_DAYS)]
    since = dt.datetime.combine(days[-1], dt.time.min, tzinfo=zone)
    counts = agent_selectors.turn_counts_by_day(since=since, zone=zone)
    for day, runs in selectors.run_counts_by_day(since=since, zone=zone).items():
        counts.setdefault(day, {}).update(runs)
    table = [[counts.get(day, {}).get(key, 0) for key, _ in ACTIVITY_COLUMNS] for day in days]
    context = {
        **admin.site.each_context(request),
        "title": "Activity",
        "zone": zone.key,
        "columns": [label for _, label in ACTIVITY_COLUMNS],
        "rows": [{"day": day, "counts": values} for day, values in zip(days, table, strict=True)],
        "totals": [sum(column) for column in zip(*table, strict=True)],
    }
    return TemplateResponse(request, "admin/activity.html", context)


admin_page_register(
    AdminPage(route="activity/", name="activity", title="Activity", view=activity_view)
)
