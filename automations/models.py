"""Automations and their runs (receipts).

An Automation row is the source of truth for what runs when: ``next_run_at`` is the next slot,
computed from ``schedule`` (talorys/lib/schedules.py) in the owner's time zone. The dispatcher
claims due rows and advances ``next_run_at``; each run of a slot leaves exactly one
AutomationRun, whose unique (automation, slot) makes a duplicated run task a no-op.
"""

from __future__ import annotations

import datetime as dt

from django.db import models
from django.db.models import Q
from django.utils import timezone

from agent.models import Conversation
from talorys.history.models import Binnable
from talorys.notifications.models import Notification


class Automation(Binnable):
    class Kind(models.TextChoices):
        REMINDER = "reminder"
        TASK_DIGEST = "task_digest"
        AGENT_PROMPT = "agent_prompt"

    class Origin(models.TextChoices):
        OWNER = "owner"  # pages or API
        CHAT = "chat"  # the create_automation tool
        IMPORT = "import"  # a backup import: starts paused

    class Status(models.TextChoices):
        OK = "ok"
        ERROR = "error"
        SKIPPED = "skipped"

    # The limits the services, the API's schemas and the tools all read (one source). The
    # message is a TextField: its limit is enforced by those, not by the database.
    NAME_MAX = 200
    MESSAGE_MAX = 4_000

    name = models.CharField(max_length=NAME_MAX)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    # The reminder text, the digest's heading, or the scheduled prompt.
    message = models.TextField(blank=True, default="")
    schedule = models.JSONField(help_text="See talorys/lib/schedules.py")
    enabled = models.BooleanField(default=True)
    origin = models.CharField(max_length=8, choices=Origin.choices, default=Origin.OWNER)
    # Bumped by every change that should void runs already queued (pause, resume, a new
    # schedule, cancel, delete): a run task carries the version it was claimed under.
    version = models.PositiveIntegerField(default=1)
    next_run_at = models.DateTimeField(null=True, blank=True)
    # The owner's time zone when next_run_at was computed; the dispatcher re-arms on a change.
    armed_time_zone = models.CharField(max_length=64, blank=True, default="")
    run_count = models.PositiveIntegerField(default=0)
    last_run_at = models.DateTimeField(null=True, blank=True)
    last_status = models.CharField(max_length=8, choices=Status.choices, blank=True, default="")
    last_result = models.TextField(blank=True, default="")
    last_error = models.TextField(blank=True, default="")
    cancelled_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["next_run_at", "id"]
        indexes = [
            # The dispatcher's query: enabled, live, due.
            models.Index(
                fields=["next_run_at"],
                name="automation_due",
                condition=Q(enabled=True, deleted_at__isnull=True),
            ),
        ]
        constraints = [
            # An enabled automation always knows its next slot; one without is disabled.
            models.CheckConstraint(
                condition=Q(enabled=False) | Q(next_run_at__isnull=False),
                name="automation_enabled_has_next_run",
            ),
            # Cancelled is for good: it never runs again.
            models.CheckConstraint(
                condition=Q(cancelled_at__isnull=True) | Q(enabled=False),
                name="automation_cancelled_is_disabled",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def one_off_over(self) -> bool:
        """A one-off whose time has passed: it will not run again and cannot be resumed (only
        a new schedule arms it), so the pages show it done, not paused."""
        if self.enabled or self.cancelled_at is not None or self.schedule.get("type") != "once":
            return False
        try:
            at = dt.datetime.fromisoformat(self.schedule["at"])
        except (KeyError, TypeError, ValueError):  # a hand edit in the admin
            return False
        return timezone.is_aware(at) and at <= timezone.now()

    @property
    def source(self) -> str:
        """Who its runs act as: the source of their notifications and of the model's changes."""
        return f"automation:{self.pk}"


class AutomationRun(models.Model):
    """The receipt of one slot. Created before the work; finished with its outcome."""

    class Status(models.TextChoices):
        RUNNING = "running"
        OK = "ok"
        ERROR = "error"
        SKIPPED = "skipped"

    automation = models.ForeignKey(Automation, on_delete=models.CASCADE, related_name="runs")
    slot = models.DateTimeField(help_text="The scheduled time this run is for")
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.RUNNING)
    started_at = models.DateTimeField()
    # While running: the worker renews it; a run whose lease ran out lost its worker and is
    # reaped as interrupted (null on receipts made before leases: their age decides).
    lease_until = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    result = models.TextField(blank=True, default="")
    error = models.TextField(blank=True, default="")
    usage = models.JSONField(default=dict, blank=True)
    notification = models.ForeignKey(
        Notification, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # A scheduled prompt's answered run: the conversation holding its prompt and answer, which
    # the owner continues like any chat (None for the other kinds, and once it is purged).
    conversation = models.ForeignKey(
        Conversation, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["-slot", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["automation", "slot"], name="automation_run_one_per_slot"
            ),
            models.CheckConstraint(
                condition=Q(status="running") | Q(finished_at__isnull=False),
                name="automation_run_finished_has_time",
            ),
        ]
        indexes = [models.Index(fields=["status", "started_at"])]

    def __str__(self) -> str:
        return f"{self.automation_id} @ {self.slot:%Y-%m-%d %H:%M} {self.status}"
