"""An import (``ImportRun``) and what each item it made came from (``ImportedItem``)."""

from __future__ import annotations

from django.db import models

from agent.models import Conversation, Message
from talorys.history.models import Binnable
from talorys.workspace.models import Note


class Source(models.TextChoices):
    """The kinds of export an import reads (imports/readers/), told apart by their content."""

    CHATGPT = "chatgpt", "ChatGPT export"
    CLAUDE = "claude", "Claude export"
    OPENWEBUI = "openwebui", "Open WebUI export"
    VAULT = "vault", "Markdown notes (Obsidian vault)"


class ImportRun(Binnable):
    """One applied import: what it was, what it added, and how far recall has indexed it.

    In the bin (``deleted_at``) once reverted or deleted: everything it made is in the bin too
    (services.import_delete), and its restore brings that back."""

    NAME_MAX = 200

    source = models.CharField(max_length=16, choices=Source.choices)
    name = models.CharField(max_length=NAME_MAX, blank=True, default="")  # the file's name
    # {"conversations": n, "messages": n, "notes": n, "attachments": n, "skipped": n}: added.
    counts = models.JSONField(default=dict)
    notes = models.JSONField(default=list)  # lines for the owner ("3 attachments not imported")
    # Recall's progress over the items this import added (services.import_index).
    total = models.PositiveIntegerField(default=0)
    indexed = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"Import of {self.name or self.get_source_display()}"


class ImportedItem(models.Model):
    """An item an import made, keyed by where it came from: (source, kind, external id). The
    same item met again is here already and is not added twice. The row goes with its item when
    the bin purges the item (CASCADE): then a new import of it adds it again."""

    class Kind(models.TextChoices):
        CONVERSATION = "conversation"
        MESSAGE = "message"
        NOTE = "note"
        FILE = "file"  # a vault's attachment (files/)

    EXTERNAL_ID_MAX = 500

    # The import that made it; None once that import was purged from the bin (the item, restored
    # on its own, stays here: still "here already" to a new import).
    run = models.ForeignKey(
        ImportRun, null=True, blank=True, on_delete=models.SET_NULL, related_name="items"
    )
    source = models.CharField(max_length=16, choices=Source.choices)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    external_id = models.CharField(max_length=EXTERNAL_ID_MAX)
    conversation = models.ForeignKey(
        Conversation, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    message = models.ForeignKey(
        Message, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    note = models.ForeignKey(
        Note, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    file = models.ForeignKey(
        "files.File", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["source", "kind", "external_id"], name="imported_item_once"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.source} {self.kind} {self.external_id}"
