"""Reads of notifications used by several callers (API, tools)."""

from __future__ import annotations

from django.db.models import QuerySet

from talorys.notifications.models import Notification


def notification_list(*, unread: bool | None = None) -> QuerySet[Notification]:
    notifications = Notification.objects.all()
    if unread is True:
        notifications = notifications.filter(read_at__isnull=True)
    elif unread is False:
        notifications = notifications.filter(read_at__isnull=False)
    return notifications
