"""What the notify_owner tool may send: the model in a chat or an automation, and every client with
a write token (MCP, /v1), can tell the owner something, and each notification reaches the
owner's browsers and channels (ntfy, e-mail, ...). So that none of them can flood those:

- **per caller**: one caller, as the tool's context records it (``mcp:<prefix>``: one MCP token;
  ``chat``: the chat's turns, the owner's and /v1's; ``automation:<id>``: one automation), makes
  at most ``Notification.TOOL_PER_CALLER_DAY`` notifications in 24 hours; past that the call is
  refused (429, the tool's result says so) and nothing is made or sent;
- **per channel**: a channel receives at most ``Notification.TOOL_PER_CHANNEL_DAY`` of the
  tool's notifications in 24 hours, whoever made them; past that the notification is still made
  (the owner sees it in Talorys and on their browsers) but that channel gets no receipt, and
  the tool's result names the channels it was not sent to;
- **the same again**: a notification with the same title and body from the same caller, while
  the earlier one is unread and younger than ``Notification.TOOL_REPEAT_WINDOW``, is not made
  again: the caller is given the earlier one (``repeated``), and it counts against nothing.

Counted from the notifications and receipts themselves (``Notification.by_tool``), in the
transaction that makes the new one; on PostgreSQL every tool notification waits for the one
before it (an advisory lock), so racing calls never pass a cap (SQLite writes one at a time).
Notifications the app makes itself (reminders, approvals, run reports) are never capped.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from dataclasses import dataclass, field

from django.db import connection, transaction
from django.db.models import Count
from django.utils import timezone

from talorys.lib.errors import RateLimited
from talorys.notifications import services
from talorys.notifications.models import Channel, ChannelDelivery, Notification

DAY = dt.timedelta(hours=24)
_LOCK = int.from_bytes(
    hashlib.blake2b(b"talorys:notify-owner", digest_size=8).digest(), signed=True
)


@dataclass(frozen=True)
class ToolNotice:
    """What the tool made: the notification (the earlier one when ``repeated``), and the
    channels that did not get it because they are full for the day."""

    notification: Notification
    repeated: bool = False
    not_sent_to: list[str] = field(default_factory=list)


def notification_from_tool(*, title: str, body: str, kind: str, source: str) -> ToolNotice:
    """Tell the owner, within the tool's caps (the module's docstring); RateLimited past the
    caller's."""
    title, body = title.strip(), body.strip()
    with transaction.atomic():
        _queue()
        now = timezone.now()
        earlier = _unread_repeat(title=title, body=body, source=source, now=now)
        if earlier is not None:
            return ToolNotice(notification=earlier, repeated=True)
        _caller_check(source=source, now=now)
        full = _full_channels(kind=kind, now=now)
        draft = services.Draft(title=title, body=body, kind=kind, source=source, by_tool=True)
        (notification,) = services.notifications_send([draft], skip_channels=set(full))
        return ToolNotice(notification=notification, not_sent_to=sorted(full.values()))


def _queue() -> None:
    """Wait for any other tool notification's transaction (PostgreSQL; SQLite runs one writing
    transaction at a time): the counts below then include it."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_LOCK])


def _unread_repeat(*, title: str, body: str, source: str, now: dt.datetime) -> Notification | None:
    return (
        Notification.objects.filter(
            by_tool=True,
            source=source,
            title=title,
            body=body,
            read_at__isnull=True,
            created_at__gt=now - Notification.TOOL_REPEAT_WINDOW,
        )
        .order_by("-created_at", "-id")
        .first()
    )


def _caller_check(*, source: str, now: dt.datetime) -> None:
    recent = Notification.objects.filter(by_tool=True, source=source, created_at__gt=now - DAY)
    cap = Notification.TOOL_PER_CALLER_DAY
    if recent.count() < cap:
        return
    oldest = recent.order_by("created_at").values_list("created_at", flat=True)[0]
    again = oldest + DAY
    raise RateLimited(
        f"notify_owner sends at most {cap} notifications in 24 hours from one caller, and "
        f"{source} has sent {cap}. Nothing was sent: the owner has the earlier ones. It can "
        f"send again after {again:%Y-%m-%d %H:%M} UTC.",
        retry_after=max(1, int((again - now).total_seconds()) + 1),
    )


def _full_channels(*, kind: str, now: dt.datetime) -> dict[int, str]:
    """The enabled channels that take ``kind`` and have had their day's share of the tool's
    notifications: id -> name."""
    counts = dict(
        ChannelDelivery.objects.filter(notification__by_tool=True, created_at__gt=now - DAY)
        .order_by()
        .values("channel")
        .annotate(sent=Count("id"))
        .filter(sent__gte=Notification.TOOL_PER_CHANNEL_DAY)
        .values_list("channel", "sent")
    )
    if not counts:
        return {}
    channels = Channel.objects.filter(pk__in=counts, enabled=True).values_list(
        "pk", "name", "kinds"
    )
    return {pk: name for pk, name, kinds in channels if kind in kinds}


def not_sent_message(names: list[str]) -> str:
    """What the tool's caller reads when channels were full."""
    return (
        f"Not sent to {', '.join(names)}: a channel receives at most "
        f"{Notification.TOOL_PER_CHANNEL_DAY} notifications from tools in 24 hours. The owner "
        "still sees it in Talorys."
    )
