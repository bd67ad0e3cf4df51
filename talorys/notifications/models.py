"""Notifications to the owner, their Web Push subscriptions, their channels (Apprise), and the
deliveries to both.

The tables keep the names they had in the talorys app (db_table)."""

from __future__ import annotations

import datetime as dt

from django.db import models
from django.db.models import Q


class Notification(models.Model):
    class Kind(models.TextChoices):
        INFO = "info"
        REMINDER = "reminder"
        DIGEST = "digest"
        AUTOMATION = "automation"
        APPROVAL = "approval"
        ERROR = "error"

    # The limits of a notification's text, read by the services and the notify_owner tool.
    TITLE_MAX = 300
    BODY_MAX = 10_000
    # What the notify_owner tool may send (talorys/notifications/from_tools.py): notifications
    # one caller (an MCP token, the chat, an automation) makes in 24 hours, notifications from
    # the tool one channel receives in 24 hours, and how long the same one again is not resent.
    TOOL_PER_CALLER_DAY = 50
    TOOL_PER_CHANNEL_DAY = 100
    TOOL_REPEAT_WINDOW = dt.timedelta(hours=1)

    title = models.CharField(max_length=TITLE_MAX)
    body = models.TextField(blank=True, default="")
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.INFO)
    # Who made it: "owner", "chat", "automation:<id>", "system".
    source = models.CharField(max_length=100, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    read_at = models.DateTimeField(null=True, blank=True)
    # Made by the notify_owner tool, so counted against its caps. Not in a backup: a restored
    # notification counts against nothing.
    by_tool = models.BooleanField(default=False)

    class Meta:
        db_table = "talorys_notification"
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["read_at", "-created_at"]),
            # A caller's notifications from the tool in the last 24 hours (its cap).
            models.Index(
                fields=["source", "-created_at"],
                condition=Q(by_tool=True),
                name="notification_by_tool",
            ),
        ]

    def __str__(self) -> str:
        return self.title

    def link(self) -> str | None:
        """The page this notification is about, when its source names one: the approval it asks
        for, the conversation whose reply is ready (agent/live/ready.py), the automations."""
        kind, _, ref = self.source.partition(":")
        if not ref.isdigit():
            return None
        return {
            "approval": f"/approvals/#approval-{ref}",
            "conversation": f"/c/{ref}/",
            "automation": "/automations/",
        }.get(kind)

    def opens(self) -> str | None:
        """What a click on it outside the app (a push, a channel's message) opens: the one thing
        it is about (an approval, a conversation); None for the rest, read in the list."""
        link = self.link()
        return link if link and self.source.startswith(("approval:", "conversation:")) else None


class PushSubscription(models.Model):
    """A browser's Web Push subscription (the PushSubscription JSON it gave us)."""

    # The limits of what a browser sends, read by the API's schema and the services.
    ENDPOINT_MAX = 2000
    P256DH_MAX = 200
    AUTH_MAX = 100
    USER_AGENT_MAX = 300

    endpoint = models.CharField(max_length=ENDPOINT_MAX, unique=True)
    p256dh = models.CharField(
        max_length=P256DH_MAX, help_text="The browser's public key (base64url)"
    )
    auth = models.CharField(max_length=AUTH_MAX, help_text="The browser's auth secret (base64url)")
    user_agent = models.CharField(max_length=USER_AGENT_MAX, blank=True, default="")
    # A push service answering 404/410 means the browser dropped it: no further pushes.
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_success_at = models.DateTimeField(null=True, blank=True)
    deactivated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "talorys_pushsubscription"
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return self.endpoint[:80]


class Delivery(models.Model):
    """One notification going somewhere (a browser, a channel): every attempt's outcome is kept.

    talorys/notifications/outbox.py moves it through its states; the subclasses add where to."""

    class Status(models.TextChoices):
        PENDING = "pending"
        HELD = "held"  # quiet hours: sent when they end (not_before)
        SENDING = "sending"
        SENT = "sent"
        FAILED = "failed"
        GONE = "gone"  # the destination no longer exists (a browser dropped its subscription)

    status = models.CharField(max_length=8, choices=Status.choices, default=Status.PENDING)
    not_before = models.DateTimeField()
    attempts = models.PositiveSmallIntegerField(default=0)
    error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["status", "not_before"])]


class PushDelivery(Delivery):
    """One notification pushed to one subscription."""

    notification = models.ForeignKey(
        Notification, on_delete=models.CASCADE, related_name="push_deliveries"
    )
    subscription = models.ForeignKey(
        PushSubscription, on_delete=models.CASCADE, related_name="deliveries"
    )
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)

    class Meta(Delivery.Meta):
        db_table = "talorys_pushdelivery"
        verbose_name_plural = "push deliveries"
        constraints = [
            models.UniqueConstraint(
                fields=["notification", "subscription"], name="push_delivery_once"
            ),
        ]

    def __str__(self) -> str:
        return f"push {self.notification_id} -> {self.subscription_id}: {self.status}"


class Channel(models.Model):
    """Somewhere else the owner reads notifications: ntfy, Telegram, email, a webhook, ...

    ``url`` is an Apprise URL and holds the destination's secrets (a bot token, a password): it
    is kept like a provider key, written by the owner's session and never read back out of the
    server (talorys/notifications/channels.py shows a masked form) nor exported in a backup."""

    NAME_MAX = 100
    URL_MAX = 2000

    name = models.CharField(max_length=NAME_MAX, unique=True)
    url = models.TextField(max_length=URL_MAX)
    # Which notification kinds it gets (Notification.Kind values).
    kinds = models.JSONField(default=list)
    enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    last_success_at = models.DateTimeField(null=True, blank=True)
    last_failure_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True, default="")

    class Meta:
        ordering = ["name", "id"]

    def __str__(self) -> str:
        return self.name


class ChannelDelivery(Delivery):
    """One notification sent to one channel: at most one per pair, so each arrives once."""

    notification = models.ForeignKey(
        Notification, on_delete=models.CASCADE, related_name="channel_deliveries"
    )
    channel = models.ForeignKey(Channel, on_delete=models.CASCADE, related_name="deliveries")

    class Meta(Delivery.Meta):
        verbose_name_plural = "channel deliveries"
        constraints = [
            models.UniqueConstraint(
                fields=["notification", "channel"], name="channel_delivery_once"
            ),
        ]

    def __str__(self) -> str:
        return f"channel {self.notification_id} -> {self.channel_id}: {self.status}"
