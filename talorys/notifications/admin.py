"""The operator's view of notifications and push deliveries."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone

from talorys.lib.readonly_admin import ReadOnlyAdmin
from talorys.notifications.models import Notification, PushDelivery, PushSubscription


@admin.register(Notification)
class NotificationAdmin(admin.ModelAdmin):
    list_display = ["title", "kind", "source", "created_at", "read_at"]
    list_filter = ["kind", ("read_at", admin.EmptyFieldListFilter), "created_at"]
    search_fields = ["title", "body", "source"]
    readonly_fields = ["created_at"]
    date_hierarchy = "created_at"
    actions = ["mark_read"]

    @admin.action(description="Mark selected notifications as read")
    def mark_read(self, request: HttpRequest, queryset: QuerySet) -> None:
        count = queryset.filter(read_at__isnull=True).update(read_at=timezone.now())
        self.message_user(request, f"{count} notification(s) marked as read.")


@admin.register(PushSubscription)
class PushSubscriptionAdmin(admin.ModelAdmin):
    list_display = ("id", "endpoint", "active", "created_at", "last_success_at", "deactivated_at")
    list_filter = ("active",)
    search_fields = ("endpoint", "user_agent")
    readonly_fields = ("p256dh", "auth", "created_at", "last_success_at", "deactivated_at")


@admin.register(PushDelivery)
class PushDeliveryAdmin(ReadOnlyAdmin):
    """The outbox of Web Push: its status and attempts are the flush task's to move (push.py)."""

    list_display = (
        "id",
        "notification",
        "subscription",
        "status",
        "attempts",
        "status_code",
        "sent_at",
    )
    list_filter = ("status",)
    search_fields = ("error", "notification__title")
    list_select_related = ("notification", "subscription")
    readonly_fields = ("created_at", "updated_at", "sent_at")
