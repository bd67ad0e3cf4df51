"""Memories: short facts about the owner, with a revision row for every change; and the recall
index (keyword entries and vectors) over every kind the owner keeps (memory/recall/)."""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from talorys.history.models import Binnable


class Memory(Binnable):
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
    # When the fact holds, where the owner said so ("lives in Berlin since 2025"); open ends are
    # unknown, not "forever".
    valid_from = models.DateField(null=True, blank=True)
    valid_to = models.DateField(null=True, blank=True)
    # A newer memory that updates this one (the conflict check's "updates"): kept, shown in the
    # history and the owner's list of superseded facts, never recalled.
    superseded_by = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="supersedes"
    )
    superseded_at = models.DateTimeField(null=True, blank=True)
    # A memory the conflict check found this one contradicts: both stay recalled (and marked)
    # until the owner resolves it by correcting, superseding or deleting one of them.
    conflicts_with = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    # One more at each change, under the row lock: an edit that names an older version is
    # refused with 409 (talorys/workspace/services/common.py, check_version).
    version = models.PositiveIntegerField(default=1)

    class Meta:
        ordering = ["-updated_at", "id"]
        verbose_name_plural = "memories"
        indexes = [
            # The contradiction marks, read at every turn: few, found without a scan.
            models.Index(
                fields=["conflicts_with"],
                name="memory_conflict_marks",
                condition=Q(conflicts_with__isnull=False),
            ),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(valid_from__isnull=True)
                | Q(valid_to__isnull=True)
                | Q(valid_from__lte=models.F("valid_to")),
                name="memory_valid_from_before_valid_to",
            ),
            models.CheckConstraint(
                condition=Q(superseded_by__isnull=True) | ~Q(superseded_by=models.F("id")),
                name="memory_not_superseded_by_itself",
            ),
        ]

    def __str__(self) -> str:
        return self.text[:80]


class MemoryRevision(models.Model):
    """The memory as it was after one change, and who made the change."""

    class Action(models.TextChoices):
        CREATE = "create"
        UPDATE = "update"
        DELETE = "delete"
        RESTORE = "restore"
        SUPERSEDE = "supersede"  # a newer memory updates it
        REINSTATE = "reinstate"  # no longer superseded (a revert, or the owner)

    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="revisions")
    action = models.CharField(max_length=10, choices=Action.choices)
    text = models.TextField()
    # The memory's own columns, as they were: same width and choices (declared once, on Memory).
    category = models.CharField(
        max_length=Memory._meta.get_field("category").max_length, choices=Memory.Category.choices
    )
    source = models.CharField(
        max_length=Memory._meta.get_field("source").max_length, choices=Memory.Source.choices
    )
    valid_from = models.DateField(null=True, blank=True)
    valid_to = models.DateField(null=True, blank=True)
    # The memory that superseded it, after this change (an id, not a key: history outlives it).
    superseded_by = models.BigIntegerField(null=True, blank=True)
    # Provenance: who made the change (the Actor's source: "owner", "token:<prefix>",
    # "owner:<name>", "chat", "automation:<id>", "import", "admin:<name>") and, for the model,
    # the turn: its conversation and the reply's message.
    actor = models.CharField(max_length=100, blank=True, default="")
    conversation_id = models.BigIntegerField(null=True, blank=True)
    message_id = models.BigIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["memory_id", "-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.action} memory {self.memory_id}"


class RecallEntry(models.Model):
    """One item of any kind as the recall engine indexes it: its text for the keyword ranking
    and, when an embedder is on, its vector. Derived data, rebuilt by ``memory.services.reindex``.

    ``seq`` orders every write to this table (assigned under IndexState's row lock, so entries
    commit in seq order): each process's in-memory index (memory/recall/index.py) reads the
    entries past the last seq it saw. A gone item leaves a tombstone (``live`` false, no text)
    until the catch-up purges it.
    """

    # How much of an item's text is indexed: a long note's first part. The vector is made from
    # a shorter prefix (memory/embeddings.py, EMBED_CHARS).
    TEXT_MAX = 20_000
    TITLE_MAX = 200

    kind = models.CharField(max_length=16)  # "memory", "task", ...: recall's kinds (sources.py)
    object_id = models.BigIntegerField()
    parent_id = models.BigIntegerField(null=True, blank=True)  # a message's conversation
    title = models.CharField(max_length=TITLE_MAX, blank=True, default="")
    text = models.TextField(blank=True, default="")
    content_hash = models.CharField(max_length=32)
    live = models.BooleanField(default=True)
    seq = models.BigIntegerField(db_index=True)
    # float32 little-endian; the embedder's name and the dimension say what it is, and the hash
    # of the content it was made from says whether it is stale.
    vector = models.BinaryField(null=True, blank=True)
    vector_model = models.CharField(max_length=200, blank=True, default="")
    vector_dim = models.PositiveIntegerField(default=0)
    vector_hash = models.CharField(max_length=32, blank=True, default="")
    # When the item said what it says (a message's time, a memory's last change): recall's
    # recency prior. Null until the catch-up has written it (then it counts as old).
    stated_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "recall entries"
        constraints = [
            models.UniqueConstraint(fields=["kind", "object_id"], name="recall_entry_one_per_item")
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.object_id}"


class IndexState(models.Model):
    """One row (pk=1): the recall index's clock. Made on first use, with a fresh generation, so
    a process whose in-memory index came from another database (or a rolled-back one) reloads.
    """

    generation = models.CharField(max_length=32)
    seq = models.BigIntegerField(default=0)
    # Tombstones up to this seq were purged: a process that saw less reloads in full.
    purged_upto = models.BigIntegerField(default=0)
    # The lazy pass (memory.services.reindex_recent) looks at changes since this instant.
    recent_since = models.DateTimeField(null=True, blank=True)
    last_full_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.CheckConstraint(condition=Q(pk=1), name="index_state_single_row")]

    def __str__(self) -> str:
        return f"Recall index at {self.seq}"
