"""Notifications to the owner, and their Web Push subscriptions and deliveries.

The tables keep the names they had in the talorys app (db_table)."""

from __future__ import annotations

from django.db import models


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

    title = models.CharField(max_length=TITLE_MAX)
    body = models.TextField(blank=True, default="")
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.INFO)
    # Who made it: "owner", "chat", "automation:<id>", "system".
    source = models.CharField(max_length=100, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    read_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "talorys_notification"
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["read_at", "-created_at"])]

    def __str__(self) -> str:
        return self.title


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


class PushDelivery(models.Model):
    """One notification pushed to one subscription: every attempt's outcome is kept here."""

    class Status(models.TextChoices):
        PENDING = "pending"
        HELD = "held"  # quiet hours: sent when they end (not_before)
        SENDING = "sending"
        SENT = "sent"
        FAILED = "failed"
        GONE = "gone"  # the subscription no longer exists at the push service

    notification = models.ForeignKey(
        Notification, on_delete=models.CASCADE, related_name="push_deliveries"
    )
    subscription = models.ForeignKey(
        PushSubscription, on_delete=models.CASCADE, related_name="deliveries"
    )
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.PENDING)
    not_before = models.DateTimeField()
    attempts = models.PositiveSmallIntegerField(default=0)
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "talorys_pushdelivery"
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "push deliveries"
        constraints = [
            models.UniqueConstraint(
                fields=["notification", "subscription"], name="push_delivery_once"
            ),
        ]
        indexes = [models.Index(fields=["status", "not_before"])]

    def __str__(self) -> str:
        return f"push {self.notification_id} -> {self.subscription_id}: {self.status}"
