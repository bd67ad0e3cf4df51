"""The operator's view of setup runs and heartbeats: records, read-only."""

from __future__ import annotations

from django.contrib import admin

from talorys.lib.readonly_admin import ReadOnlyAdmin
from talorys.ops.models import Heartbeat, SetupRun


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
