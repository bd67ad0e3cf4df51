"""The model's notification tools: list notifications, notify the owner."""

from __future__ import annotations

from typing import Any
from zoneinfo import ZoneInfo

from django.db.models import QuerySet
from pydantic import Field

from talorys.lib.tools import (
    ListTool,
    Permission,
    Tool,
    ToolArgs,
    ToolContext,
    register,
)
from talorys.notifications import selectors
from talorys.notifications.from_tools import not_sent_message, notification_from_tool
from talorys.notifications.models import Notification
from talorys.workspace.tools.common import clip, local_iso


def _notification(notification: Notification, zone: ZoneInfo) -> dict[str, Any]:
    return {
        "id": notification.pk,
        "title": notification.title,
        "body": clip(notification.body, 300),
        "kind": notification.kind,
        "created_at": local_iso(notification.created_at, zone),
        "read": notification.read_at is not None,
    }


# --- notifications -----------------------------------------------------------------------------

NOTIFICATIONS_SHOWN = 20


class ListNotificationsArgs(ToolArgs):
    unread_only: bool = Field(False, description="Only notifications the owner has not read.")


@register
class ListNotifications(ListTool):
    name = "list_notifications"
    description = f"List the owner's {NOTIFICATIONS_SHOWN} most recent notifications."
    args = ListNotificationsArgs
    cap = 3
    key = "notifications"
    shown = NOTIFICATIONS_SHOWN

    def rows(self, args: ListNotificationsArgs, ctx: ToolContext) -> QuerySet[Notification]:
        return selectors.notification_list(unread=True if args.unread_only else None)

    def item(self, row: Notification, args: ToolArgs, ctx: ToolContext) -> dict[str, Any]:
        return _notification(row, ctx.zone)


class NotifyOwnerArgs(ToolArgs):
    title: str = Field(
        min_length=1, max_length=Notification.TITLE_MAX, description="One-line headline."
    )
    body: str = Field("", max_length=Notification.BODY_MAX, description="Optional details.")


@register
class NotifyOwner(Tool):
    name = "notify_owner"
    description = (
        "Send the owner a notification they will see in their notification list. Use it in "
        "scheduled runs to report what you found; in chat, just answer instead. At most "
        f"{Notification.TOOL_PER_CALLER_DAY} a day; the same one again while it is unread is "
        "not sent twice."
    )
    args = NotifyOwnerArgs
    permission = Permission.WRITE
    cap = 3

    def run(self, args: NotifyOwnerArgs, ctx: ToolContext) -> dict[str, Any]:
        kind = Notification.Kind.AUTOMATION if ctx.mode == "scheduled" else Notification.Kind.INFO
        # Within the tool's caps; it also reaches open pages, subscribed browsers and channels.
        notice = notification_from_tool(
            title=args.title, body=args.body, kind=kind, source=ctx.source
        )
        result: dict[str, Any] = {
            "notification": _notification(notice.notification, ctx.zone),
            "repeated": notice.repeated,
        }
        if notice.repeated:
            result["message"] = (
                "The owner already has this notification, unread: it was not sent again."
            )
        if notice.not_sent_to:
            result["not_sent_to"] = notice.not_sent_to
            result["message"] = not_sent_message(notice.not_sent_to)
        return result
