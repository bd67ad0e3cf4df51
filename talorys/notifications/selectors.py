"""Reads of notifications and the owner's channels used by several callers (API, pages, tools)."""

from __future__ import annotations

from django.db.models import Prefetch, QuerySet

from talorys.lib.errors import NotFound
from talorys.notifications.models import Channel, ChannelDelivery, Notification


def notification_list(*, unread: bool | None = None) -> QuerySet[Notification]:
    # Each with its receipts from the owner's channels (shown when one failed): one query more.
    receipts = ChannelDelivery.objects.select_related("channel").order_by("channel__name")
    notifications = Notification.objects.prefetch_related(
        Prefetch("channel_deliveries", queryset=receipts)
    )
    if unread is not None:
        notifications = notifications.filter(read_at__isnull=unread)
    return notifications


def channel_list() -> QuerySet[Channel]:
    return Channel.objects.all()


def channel_get(*, channel_id: int) -> Channel:
    channel = Channel.objects.filter(pk=channel_id).first()
    if channel is None:
        raise NotFound(f"Channel {channel_id} does not exist.")
    return channel
