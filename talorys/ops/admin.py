"""The operator's view of setup runs and heartbeats (records, read-only) and of the system jobs
beat runs (each one paused or resumed, its interval changed).

django-celery-beat's own admin pages are taken off: they would let the operator add jobs, edit
a job's task and arguments, and edit an interval row that several jobs share. Its table holds
only the system jobs (settings.CELERY_BEAT_SCHEDULE); the owner's automations have their own
schedules and dispatcher (automations/admin.py, automations/services/).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from django import forms
from django.apps import apps
from django.conf import settings
from django.contrib import admin
from django.http import HttpRequest
from django_celery_beat.models import IntervalSchedule

from talorys.ops import services
from talorys.ops.models import Heartbeat, SetupRun, SystemJob
from talorys.ops.selectors import SCHEDULE_FIELDS
from talorys.web.readonly_admin import ReadOnlyAdmin
from talorys.web.service_admin import ServiceAdmin

for _model in apps.get_app_config("django_celery_beat").get_models():
    # INSTALLED_APPS loads django_celery_beat's admin before this one.
    if admin.site.is_registered(_model):
        admin.site.unregister(_model)


@admin.register(SetupRun)
class SetupRunAdmin(ReadOnlyAdmin):
    """Written by talorys_setup only: a record edited by hand would no longer say what ran."""

    list_display = ["started_at", "kind", "version", "outcome", "finished_at"]
    list_filter = ["kind", "outcome"]
    search_fields = ["message", "version"]
    date_hierarchy = "started_at"


@admin.register(Heartbeat)
class HeartbeatAdmin(ReadOnlyAdmin):
    """Written by the worker and beat only (talorys/ops/tasks.py)."""

    list_display = ["name", "at"]


class SystemJobForm(forms.ModelForm):
    """The interval in seconds, not a pick of django-celery-beat's interval rows."""

    every_seconds = forms.IntegerField(
        label="every (seconds)",
        min_value=1,
        required=False,
        help_text="Kept across beat's restarts; the setting's default is shown below.",
    )

    class Meta:
        model = SystemJob
        fields = ["enabled"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        interval = self.instance.interval if self.instance.pk else None
        if interval is None:  # a calendar job (celery's own clean-up): fixed in code
            self.fields["every_seconds"].disabled = True
            self.fields["every_seconds"].help_text = "Runs on a calendar, not an interval."
        else:
            every = dt.timedelta(**{interval.period: interval.every}).total_seconds()
            self.fields["every_seconds"].initial = int(every)


@admin.register(SystemJob)
class SystemJobAdmin(ServiceAdmin):
    """Edits go through talorys/ops/services.py (system_job_update). No job is added or removed
    here: the setting names them, and beat installs and removes them at start."""

    form = SystemJobForm
    list_display = [
        "name",
        "enabled",
        "current_schedule",
        "default",
        "last_run_at",
        "total_run_count",
        "task",
    ]
    list_editable = ["enabled"]
    list_filter = ["enabled"]
    list_select_related = SCHEDULE_FIELDS
    ordering = ["name"]
    search_fields = ["name", "task"]
    readonly_fields = [
        "name",
        "task",
        "current_schedule",
        "default",
        "expire_seconds",
        "last_run_at",
        "total_run_count",
    ]
    fields = [*readonly_fields[:2], "enabled", "every_seconds", *readonly_fields[2:]]

    @admin.display(description="schedule")
    def current_schedule(self, obj: SystemJob) -> str:
        return str(obj.scheduler or "-")

    @admin.display(description="setting's default")
    def default(self, obj: SystemJob) -> str:
        """What the setting says, which a new installation starts with: the way back after an
        edit. Read from the setting, not stored, since the setting is code."""
        job = settings.CELERY_BEAT_SCHEDULE.get(obj.name)
        if job is None:  # celery's own clean-up
            return "-"
        if isinstance(job["schedule"], int | float):  # seconds, as beat reads them
            return str(
                IntervalSchedule(every=int(job["schedule"]), period=IntervalSchedule.SECONDS)
            )
        return str(job["schedule"])

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def service_update(self, request: HttpRequest, obj: SystemJob, changes: dict[str, Any]) -> None:
        services.system_job_update(job_id=obj.pk, **changes)
