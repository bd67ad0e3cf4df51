"""Delivering notifications to the owner's channels, in the worker: one receipt per notification
and channel (ChannelDelivery, unique per pair), so each arrives once per channel.

A notification makes its receipts in its own transaction (``channel_deliveries_create``, from
services.py), one per enabled channel that takes its kind; each is sent through Apprise outside
any transaction, through the states outbox.py keeps for every delivery. Every receipt is its
own task, so a dead or slow channel never holds up another channel, the Web Push, or the
notification on open pages.

What a channel receives: the title, the body, and a link to the page the notification is about
(an approval, a conversation) on TALORYS_PUBLIC_URL, in the format the channel takes (Markdown,
HTML or plain text: channels.flavoured). Never a capability to act: a channel is
not end-to-end encrypted, so deciding an approval from it takes the owner's session.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Sequence

from django.conf import settings
from django.utils import timezone

from talorys.lib.validation import clip
from talorys.notifications import outbox
from talorys.notifications.channels import apprise_send, channel_outcome
from talorys.notifications.models import Channel, ChannelDelivery, Notification
from talorys.notifications.outbox import hold_or_claim, record, settle

Status = ChannelDelivery.Status
BODY_MAX = 4000  # chars: every service takes this much (Telegram's limit is 4096)


def channel_deliveries_create(
    *,
    notifications: Sequence[Notification],
    now: dt.datetime | None = None,
    skip: Collection[int] = (),
) -> list[int]:
    """One receipt per notification and enabled channel that takes its kind (but the channels
    in ``skip``), in one INSERT. Returns the ids to send now (none in quiet hours)."""
    channels = list(Channel.objects.filter(enabled=True).exclude(pk__in=skip).only("pk", "kinds"))
    rows = [
        {"notification": n, "channel": c}
        for n in notifications
        for c in channels
        if n.kind in c.kinds
    ]
    return outbox.deliveries_create(ChannelDelivery, rows, now or timezone.now())


def message_body(notification: Notification) -> str:
    """The body a channel gets (Markdown, sent as the channel takes it: channels.flavoured): the
    notification's, clipped."""
    return clip(notification.body.strip(), BODY_MAX)


def message_link(notification: Notification) -> str:
    """The address of what the notification is about (an approval, a conversation), or ""."""
    link = notification.opens()
    return f"{settings.TALORYS_PUBLIC_URL}{link}" if link else ""


def channel_delivery_send(*, delivery_id: int, now: dt.datetime | None = None) -> str | None:
    """Send one receipt if it is due, and record what happened. Returns the new status, or None
    when there was nothing to do (claimed by another task, sent, or not yet due)."""
    now = now or timezone.now()
    claimed = hold_or_claim(ChannelDelivery, delivery_id, now)
    if claimed != Status.SENDING:
        return claimed
    delivery = ChannelDelivery.objects.select_related("notification", "channel").get(pk=delivery_id)
    channel, notification = delivery.channel, delivery.notification
    if not channel.enabled:
        record(ChannelDelivery, delivery_id, now, status=Status.FAILED, error="Channel turned off.")
        return Status.FAILED
    # Outside any transaction: a service may take seconds, and nothing here holds a lock.
    error = apprise_send(
        channel.url,
        title=notification.title,
        body=message_body(notification),
        kind=notification.kind,
        link=message_link(notification),
    )
    status = settle(delivery, now, error=error, retryable=True)
    channel_outcome(channel.pk, error)
    return status


def channel_deliveries_flush(*, now: dt.datetime | None = None) -> list[int]:
    """Receipts to (re)send now, by outbox.due."""
    return outbox.due(ChannelDelivery, now or timezone.now())
