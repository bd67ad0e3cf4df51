"""Memories: short facts about the owner, with a revision row for every change."""

from __future__ import annotations

from django.db import models

from talorys.workspace.models import LiveManager


class Memory(models.Model):
    # Memories are short facts; a long text belongs in a note. The services, the API's schemas,
    # the admin's form and the model's tools all read this (the column itself is unbounded).
    TEXT_MAX = 2_000

    class Category(models.TextChoices):
        FACT = "fact"
        PREFERENCE = "preference"
        PERSON = "person"
        PLACE = "place"
        GOAL = "goal"
        OTHER = "other"

    class Source(models.TextChoices):
        CHAT = "chat"
        OWNER = "owner"
        IMPORT = "import"
        AUTOMATION = "automation"

    text = models.TextField()
    category = models.CharField(max_length=16, choices=Category.choices, default=Category.FACT)
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.OWNER)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    deleted_at = models.DateTimeField(null=True, blank=True)

    objects = LiveManager()

    class Meta:
        ordering = ["-updated_at", "id"]
        verbose_name_plural = "memories"

    def __str__(self) -> str:
        return self.text[:80]


class MemoryRevision(models.Model):
    """The memory as it was after one change, and who made the change."""

    class Action(models.TextChoices):
        CREATE = "create"
        UPDATE = "update"
        DELETE = "delete"
        RESTORE = "restore"

    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="revisions")
    action = models.CharField(max_length=8, choices=Action.choices)
    text = models.TextField()
    # The memory's own columns, as they were: same width and choices (declared once, on Memory).
    category = models.CharField(
        max_length=Memory._meta.get_field("category").max_length, choices=Memory.Category.choices
    )
    source = models.CharField(
        max_length=Memory._meta.get_field("source").max_length, choices=Memory.Source.choices
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["memory_id", "-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.action} memory {self.memory_id}"
