"""Telling the owner something: the notification, then live delivery and Web Push, on commit.

``notification_send`` is the one way code that *tells* the owner (automation runs, the
notify_owner tool) makes a notification. In one transaction it saves the notification and one
push delivery per subscribed browser; after commit it shows the notification on open pages
(Channels group ``owner-notifications``, see talorys/consumers.py) and enqueues the pushes. A
rolled-back caller therefore announces nothing, and a push whose task is lost is still a pending
delivery that the flush task sends later.
"""

from __future__ import annotations

import logging
from functools import partial
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

from talorys import push, services
from talorys.models import Notification
from talorys.tasks import deliver_push

log = logging.getLogger(__name__)

NOTIFICATIONS_GROUP = "owner-notifications"


def notification_payload(notification: Notification) -> dict[str, Any]:
    """The notification as open pages receive it (the fields of the API's NotificationOut)."""
    return {
        "id": notification.pk,
        "title": notification.title,
        "body": notification.body,
        "kind": notification.kind,
        "source": notification.source,
        "created_at": notification.created_at.isoformat(),
        "read_at": notification.read_at.isoformat() if notification.read_at else None,
    }


def notification_send(
    *, title: str, body: str = "", kind: str = Notification.Kind.INFO, source: str = ""
) -> Notification:
    """Create a notification; on commit, broadcast it to open pages and push it to browsers."""
    with transaction.atomic():
        notification = services.notification_create(
            title=title, body=body, kind=kind, source=source
        )
        to_send = push.push_deliveries_create(notification=notification)
        # robust: a channel layer or broker outage is logged and must not fail the caller,
        # whose transaction has already committed by then.
        transaction.on_commit(partial(_broadcast, notification_payload(notification)), robust=True)
        for delivery_id in to_send:
            transaction.on_commit(partial(_enqueue_push, delivery_id), robust=True)
    return notification


def _broadcast(payload: dict[str, Any]) -> None:
    layer = get_channel_layer()
    if layer is not None:
        async_to_sync(layer.group_send)(
            NOTIFICATIONS_GROUP, {"type": "notification.created", "notification": payload}
        )


def _enqueue_push(delivery_id: int) -> None:
    deliver_push.delay(delivery_id)
