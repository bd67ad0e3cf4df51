"""The operator's view of notifications, push subscriptions and deliveries: read-only, with what
the owner can do to them as actions through the services (mark read, remove a subscription)."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from talorys.notifications import push, services
from talorys.notifications.models import Notification, PushDelivery, PushSubscription
from talorys.web.readonly_admin import ReadOnlyAdmin


@admin.register(Notification)
class NotificationAdmin(ReadOnlyAdmin):
    """What was said to the owner is history: it is read here, never rewritten."""

    list_display = ["title", "kind", "source", "created_at", "read_at"]
    list_filter = ["kind", ("read_at", admin.EmptyFieldListFilter), "created_at"]
    search_fields = ["title", "body", "source"]
    date_hierarchy = "created_at"
    actions = ["mark_read"]

    @admin.action(description="Mark selected notifications as read")
    def mark_read(self, request: HttpRequest, queryset: QuerySet) -> None:
        unread = list(queryset.filter(read_at__isnull=True).values_list("pk", flat=True))
        for notification_id in unread:
            services.notification_mark_read(notification_id=notification_id)
        self.message_user(request, f"{len(unread)} notification(s) marked as read.")


@admin.register(PushSubscription)
class PushSubscriptionAdmin(ReadOnlyAdmin):
    """A browser's subscription is the browser's to make (the endpoint is checked when it
    registers, push_endpoints.py); the operator may only remove one, as the owner can."""

    list_display = ("id", "endpoint", "active", "created_at", "last_success_at", "deactivated_at")
    list_filter = ("active",)
    search_fields = ("endpoint", "user_agent")
    actions = ["remove"]

    @admin.action(description="Remove selected subscriptions")
    def remove(self, request: HttpRequest, queryset: QuerySet) -> None:
        chosen = list(queryset.values_list("pk", flat=True))
        for subscription_id in chosen:
            push.push_subscription_delete(subscription_id=subscription_id)
        self.message_user(request, f"{len(chosen)} subscription(s) removed.")


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
