"""The owner's data: projects, tasks, notes, settings, usage, and the change log.

Talorys serves one owner, so rows carry no owner column: the database *is* the owner's.
Deletion by the model goes through approvals and is soft (``deleted_at``); the bin is invisible
to lists, search and tools (see ``LiveQuerySet.live``). The tables keep the names they had in
the talorys app (db_table): the models moved here without a change to the database.
"""

from __future__ import annotations

from typing import Self, TypeVar
from zoneinfo import available_timezones

from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q

_M = TypeVar("_M", bound=models.Model)


class LiveQuerySet(models.QuerySet[_M]):
    def live(self) -> Self:
        return self.filter(deleted_at__isnull=True)


class LiveManager(models.Manager[_M]):
    """``objects`` of every kind with a bin: its querysets are LiveQuerySets.

    A class of its own rather than ``LiveQuerySet.as_manager()``: django-stubs builds the manager
    that ``as_manager()`` makes in each module that calls it, and loses it in an incremental mypy
    run after another app's models changed ("Could not resolve manager type").
    """

    def get_queryset(self) -> LiveQuerySet[_M]:
        return LiveQuerySet(self.model, using=self._db)

    def live(self) -> LiveQuerySet[_M]:
        return self.get_queryset().live()


class Project(models.Model):
    # The limits of the owner's text, read by the services, the API's schemas and the tools.
    NAME_MAX = 200
    DESCRIPTION_MAX = 10_000

    name = models.CharField(max_length=NAME_MAX)
    description = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    # One more at each change of the content, under the row lock: an edit that names the version
    # it read is refused with 409 when the item changed since (services/common.check_version).
    version = models.PositiveIntegerField(default=1)
    deleted_at = models.DateTimeField(null=True, blank=True)

    objects = LiveManager()

    class Meta:
        db_table = "talorys_project"
        ordering = ["name", "id"]

    def __str__(self) -> str:
        return self.name


class Task(models.Model):
    class Status(models.TextChoices):
        OPEN = "open"
        DONE = "done"

    class Priority(models.IntegerChoices):
        LOW = 1
        NORMAL = 2
        HIGH = 3

    # The limits of the owner's text, read by the services, the API's schemas and the tools.
    TITLE_MAX = 500
    DETAILS_MAX = 20_000

    title = models.CharField(max_length=TITLE_MAX)
    details = models.TextField(blank=True, default="")
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.OPEN)
    priority = models.PositiveSmallIntegerField(choices=Priority.choices, default=Priority.NORMAL)
    due_at = models.DateTimeField(null=True, blank=True)
    project = models.ForeignKey(
        Project, null=True, blank=True, on_delete=models.SET_NULL, related_name="tasks"
    )
    completed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    # One more at each change of the content, under the row lock: an edit that names the version
    # it read is refused with 409 when the item changed since (services/common.check_version).
    version = models.PositiveIntegerField(default=1)
    deleted_at = models.DateTimeField(null=True, blank=True)

    objects = LiveManager()

    class Meta:
        db_table = "talorys_task"
        ordering = ["status", "due_at", "-priority", "id"]
        indexes = [
            # The list's order, over the live tasks only: a page of GET /api/tasks is an index
            # scan that stops at its limit, not a sort of every task (5.5 ms with 10,000 of
            # them). Its (status, due_at) prefix serves the due filters as well.
            models.Index(
                fields=["status", "due_at", "-priority", "id"],
                name="task_live_list_order",
                condition=Q(deleted_at__isnull=True),
            ),
        ]
        constraints = [
            # A done task knows when it was done; an open one does not.
            models.CheckConstraint(
                condition=(
                    Q(status="done", completed_at__isnull=False)
                    | Q(status="open", completed_at__isnull=True)
                ),
                name="task_completed_at_matches_status",
            ),
        ]

    def __str__(self) -> str:
        return self.title


class Note(models.Model):
    # The limits of the owner's text, read by the services, the API's schemas and the tools.
    TITLE_MAX = 300
    CONTENT_MAX = 200_000

    title = models.CharField(max_length=TITLE_MAX)
    content = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    # One more at each change of the content, under the row lock: an edit that names the version
    # it read is refused with 409 when the item changed since (services/common.check_version).
    version = models.PositiveIntegerField(default=1)
    deleted_at = models.DateTimeField(null=True, blank=True)

    objects = LiveManager()

    class Meta:
        db_table = "talorys_note"
        ordering = ["-updated_at", "id"]

    def __str__(self) -> str:
        return self.title


def validate_time_zone(value: str) -> None:
    if value not in available_timezones():
        raise ValidationError(f"Unknown time zone {value!r}; use an IANA name like Europe/Paris.")


class OwnerSettings(models.Model):
    """One row (pk=1). Model choices here override the environment's."""

    # The limits of each text setting, read by the API's schema.
    TIME_ZONE_MAX = 64
    URL_MAX = 500
    MODEL_NAME_MAX = 200
    API_KEY_MAX = 500

    time_zone = models.CharField(
        max_length=TIME_ZONE_MAX, default="UTC", validators=[validate_time_zone]
    )
    # Whether the owner (or the browser, at the first run) chose the zone: until then the pages
    # take it from the browser once (static/talorys/js/first-run.js). Set by the settings service.
    time_zone_confirmed = models.BooleanField(default=False)
    model_base_url = models.CharField(max_length=URL_MAX, blank=True, default="")
    model_name = models.CharField(max_length=MODEL_NAME_MAX, blank=True, default="")
    model_api_key = models.CharField(max_length=API_KEY_MAX, blank=True, default="")
    # Limits per day and per turn: defaults of our own choosing, which the owner's settings change.
    daily_ai_requests = models.PositiveIntegerField(default=200)
    daily_scheduled_ai_requests = models.PositiveIntegerField(default=50)
    daily_embedding_requests = models.PositiveIntegerField(default=1000)
    max_steps_per_turn = models.PositiveSmallIntegerField(default=6)
    max_tool_calls_per_turn = models.PositiveSmallIntegerField(default=12)
    max_output_tokens = models.PositiveIntegerField(default=1024)
    max_context_tokens = models.PositiveIntegerField(default=8000)
    # Semantic recall: on by default, with the local embedder (nothing leaves the machine).
    semantic_enabled = models.BooleanField(default=True)
    embeddings_base_url = models.CharField(max_length=URL_MAX, blank=True, default="")
    embeddings_model = models.CharField(max_length=MODEL_NAME_MAX, blank=True, default="")
    embeddings_api_key = models.CharField(max_length=API_KEY_MAX, blank=True, default="")
    # Quiet hours hold pushes (not notifications) in the owner's time zone.
    quiet_hours_start = models.TimeField(null=True, blank=True)
    quiet_hours_end = models.TimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "talorys_ownersettings"
        verbose_name_plural = "owner settings"
        constraints = [models.CheckConstraint(condition=Q(pk=1), name="owner_settings_single_row")]

    def __str__(self) -> str:
        return "Owner settings"


class UsageDay(models.Model):
    """Requests spent on one UTC day. Reserved with a conditional UPDATE before each call."""

    day = models.DateField(unique=True)
    ai_requests = models.PositiveIntegerField(default=0)
    scheduled_ai_requests = models.PositiveIntegerField(default=0)
    embedding_requests = models.PositiveIntegerField(default=0)
    input_tokens = models.PositiveBigIntegerField(default=0)
    output_tokens = models.PositiveBigIntegerField(default=0)

    class Meta:
        db_table = "talorys_usageday"
        ordering = ["-day"]

    def __str__(self) -> str:
        return f"Usage {self.day}"


class Change(models.Model):
    """One change to an item the owner keeps (task, note, project, memory, automation,
    conversation): who made it, from which turn, and the item's content fields before and after.

    The model's changes are listed under the reply that made them and can be reverted
    (talorys/workspace/history.py); the owner's own edits are kept as history. ``object_id`` is not a
    foreign key: the row outlives a move to the bin, and the kinds live in several apps.
    """

    class Action(models.TextChoices):
        CREATE = "create"
        UPDATE = "update"
        DELETE = "delete"  # to the bin
        RESTORE = "restore"  # out of the bin

    kind = models.CharField(max_length=16)
    object_id = models.BigIntegerField()
    action = models.CharField(max_length=8, choices=Action.choices)
    title = models.CharField(max_length=200, blank=True, default="")
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    # What else undoing it needs (a binned project's tasks).
    detail = models.JSONField(default=dict, blank=True)
    # Who: "owner" (session), "token:<prefix>", "owner:<name>" (an approval), "chat",
    # "automation:<id>", "import", "system".
    source = models.CharField(max_length=100)
    conversation_id = models.BigIntegerField(null=True, blank=True)
    message_id = models.BigIntegerField(null=True, blank=True)
    # Set on the change(s) a revert made, pointing at the change they reverted.
    reverts = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="reverted_by"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "talorys_change"
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["kind", "object_id", "-id"]),
            models.Index(fields=["message_id"]),
            # What changed lately (the recall index's lazy pass, at every search).
            models.Index(fields=["created_at"]),
        ]

    def __str__(self) -> str:
        return f"{self.action} {self.kind} {self.object_id} by {self.source}"
