"""Reads of notifications used by several callers (API, tools)."""

from __future__ import annotations

from django.db.models import Prefetch, QuerySet

from talorys.notifications.models import ChannelDelivery, Notification


def notification_list(*, unread: bool | None = None) -> QuerySet[Notification]:
    # Each with its receipts from the owner's channels (shown when one failed): one query more.
    receipts = ChannelDelivery.objects.select_related("channel").order_by("channel__name")
    notifications = Notification.objects.prefetch_related(
        Prefetch("channel_deliveries", queryset=receipts)
    )
    if unread is True:
        notifications = notifications.filter(read_at__isnull=True)
    elif unread is False:
        notifications = notifications.filter(read_at__isnull=False)
    return notifications
