"""The history platform's tables: the change log (``Change``), and what every kind with a bin
is built on (``Binnable``: its ``deleted_at`` and ``LiveManager``, whose ``.live()`` leaves the
bin out of lists, search and tools).

``Change`` keeps the table it had in the talorys app (db_table): it moved here from the
workspace without a change to the database.
"""

from __future__ import annotations

from typing import Self, TypeVar

from django.db import models

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


class Binnable(models.Model):
    """An item the owner keeps that goes to the bin (talorys/history/bin.py) before it is gone:
    ``deleted_at`` says since when it is there, and ``objects.live()`` leaves it out. Abstract:
    each kind keeps its own table."""

    deleted_at = models.DateTimeField(null=True, blank=True)

    objects = LiveManager()

    class Meta:
        abstract = True


class Change(models.Model):
    """One change to an item the owner keeps (task, note, project, memory, automation,
    conversation): who made it, from which turn, and the item's content fields before and after.

    The model's changes are listed under the reply that made them and can be reverted
    (talorys/history/changes.py); the owner's own edits are kept as history. ``object_id`` is not a
    foreign key: the row outlives a move to the bin, and the kinds live in several apps.
    """

    class Action(models.TextChoices):
        CREATE = "create"
        UPDATE = "update"
        DELETE = "delete"  # to the bin
        RESTORE = "restore"  # out of the bin

    # How much of an item's title the log and the bin keep and show.
    TITLE_MAX = 200

    kind = models.CharField(max_length=16)
    object_id = models.BigIntegerField()
    action = models.CharField(max_length=8, choices=Action.choices)
    title = models.CharField(max_length=TITLE_MAX, blank=True, default="")
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    # What else undoing it needs (a binned project's tasks).
    detail = models.JSONField(default=dict, blank=True)
    # Who: "owner" (session), "token:<prefix>", "mcp:<prefix>" (an MCP client's token),
    # "owner:<name>" (an approval), "chat",
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
