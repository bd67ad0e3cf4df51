from __future__ import annotations

from django.contrib import admin

from approvals.models import ApprovalEvent, PendingAction
from talorys.web.readonly_admin import ReadOnlyAdmin


class ApprovalEventInline(admin.TabularInline):
    model = ApprovalEvent
    extra = 0
    can_delete = False
    fields = ("at", "kind", "actor", "detail")
    readonly_fields = fields


@admin.register(PendingAction)
class PendingActionAdmin(ReadOnlyAdmin):
    """Read-only: a status, payload or expiry changed by hand would commit what the owner never
    approved (or reopen an expired action) with no audit line. Approvals are decided by the owner
    through approvals/services.py only; decided ones are pruned by housekeeping."""

    list_display = (
        "id",
        "tool",
        "target_id",
        "summary",
        "status",
        "created_at",
        "expires_at",
        "decided_at",
    )
    list_filter = ("status", "tool")
    search_fields = ("summary", "preview", "error")
    inlines = [ApprovalEventInline]


@admin.register(ApprovalEvent)
class ApprovalEventAdmin(ReadOnlyAdmin):
    """The audit trail is written by the code and kept: never added, changed or deleted by hand."""

    list_display = ("at", "kind", "tool", "target_id", "summary", "actor")
    list_filter = ("kind", "tool")
    search_fields = ("summary", "detail", "actor")
    readonly_fields = [f.name for f in ApprovalEvent._meta.fields]
