"""The owner's data: projects, tasks and notes.

Talorys serves one owner, so rows carry no owner column: the database *is* the owner's.
Deletion by the model goes through approvals and is soft (``deleted_at``); the bin is invisible
to lists, search and tools (``Binnable``, talorys/history/models.py). The tables keep the names they had in
the talorys app (db_table): the models moved here without a change to the database.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from talorys.history.models import Binnable


class Item(Binnable):
    """What every kind here keeps beside its content. Each kind's ``*_MAX`` are the limits of
    the owner's text, read by the services, the API's schemas and the tools."""

    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    # One more at each change of the content, under the row lock: an edit that names the version
    # it read is refused with 409 when the item changed since (services/common.check_version).
    version = models.PositiveIntegerField(default=1)

    class Meta:
        abstract = True


class Project(Item):
    NAME_MAX = 200
    DESCRIPTION_MAX = 10_000

    name = models.CharField(max_length=NAME_MAX)
    description = models.TextField(blank=True, default="")

    class Meta:
        db_table = "talorys_project"
        ordering = ["name", "id"]

    def __str__(self) -> str:
        return self.name


class Task(Item):
    class Status(models.TextChoices):
        OPEN = "open"
        DONE = "done"

    class Priority(models.IntegerChoices):
        LOW = 1
        NORMAL = 2
        HIGH = 3

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
    # A recurring schedule (talorys/lib/schedules.py, never "once"): completing the task moves
    # its due date to the next occurrence instead of closing it (services/tasks.py).
    repeat = models.JSONField(
        null=True,
        blank=True,
        help_text="A schedule as talorys/lib/schedules.py reads it: daily, weekly, monthly or cron",
    )

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


class Note(Item):
    TITLE_MAX = 300
    CONTENT_MAX = 200_000

    title = models.CharField(max_length=TITLE_MAX)
    content = models.TextField(blank=True, default="")

    class Meta:
        db_table = "talorys_note"
        ordering = ["-updated_at", "id"]

    def __str__(self) -> str:
        return self.title
