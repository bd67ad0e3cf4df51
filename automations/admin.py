from django.contrib import admin

from automations.models import Automation, AutomationRun


class AutomationRunInline(admin.TabularInline):
    model = AutomationRun
    extra = 0
    can_delete = False
    fields = ("slot", "status", "started_at", "finished_at", "result", "error")
    readonly_fields = fields
    ordering = ("-slot",)
    show_change_link = True

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Automation)
class AutomationAdmin(admin.ModelAdmin):
    list_display = (
        "name",
        "kind",
        "enabled",
        "origin",
        "next_run_at",
        "run_count",
        "last_status",
        "cancelled_at",
        "deleted_at",
    )
    list_filter = ("kind", "enabled", "origin", "last_status")
    search_fields = ("name", "message")
    # The dispatcher's bookkeeping: editing it by hand would break the one-run-per-slot rule.
    readonly_fields = (
        "version",
        "armed_time_zone",
        "run_count",
        "last_run_at",
        "last_status",
        "last_result",
        "last_error",
        "created_at",
        "updated_at",
    )
    inlines = [AutomationRunInline]


@admin.register(AutomationRun)
class AutomationRunAdmin(admin.ModelAdmin):
    list_display = ("automation", "slot", "status", "started_at", "finished_at")
    list_filter = ("status",)
    search_fields = ("automation__name", "result", "error")
    raw_id_fields = ("automation", "notification")
    date_hierarchy = "slot"
