"""Conversations and their messages."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import models

from talorys.accounts.models import ApiToken
from talorys.history.models import Binnable

if TYPE_CHECKING:
    from talorys.history.models import Change


class Origin(models.TextChoices):
    """Where a conversation or a message came from. An imported one was never typed into this
    chat: its messages are data, never retried as live input (rerun.retry_target). An ``api``
    conversation was started by another chat client through /v1/chat/completions (agent/
    completions/); its messages were typed live, there, except the earlier messages a client
    sent of a chat Talorys did not hold (``client``: data too, like an import's, but from that
    client rather than from a backup). An ``automation`` conversation is a scheduled prompt's
    run (automations/services/runs.py): its first message is the automation's stored prompt and
    the second the model's answer, both ``automation``; the run's receipt points to it
    (AutomationRun.conversation), and the owner continues it like any chat."""

    LIVE = "live"
    IMPORT = "import"
    API = "api"
    CLIENT = "client"
    AUTOMATION = "automation"


# Never typed into this chat: never retried, regenerated or edited as live input.
RECORDED = frozenset({Origin.IMPORT, Origin.CLIENT})


class Conversation(Binnable):
    TITLE_MAX = 200
    MODEL_MAX = 200

    class TitleSource(models.TextChoices):
        """Who wrote the title: a new conversation's is its first words (the demo's short title
        under the demo model); the model may give it a better one once, after the first reply
        (runner/title.py); the owner's rename is final."""

        MESSAGE = "message"
        MODEL = "model"
        OWNER = "owner"

    title = models.CharField(max_length=TITLE_MAX, blank=True, default="")
    title_source = models.CharField(
        max_length=8, choices=TitleSource.choices, default=TitleSource.MESSAGE
    )
    # Running summary of messages evicted from the context window, up to and including
    # the message with id ``summary_upto``.
    summary = models.TextField(blank=True, default="")
    summary_upto = models.BigIntegerField(null=True, blank=True)
    # The turn in progress, if any: a lease held across processes (see agent/services.py).
    turn_id = models.CharField(max_length=64, blank=True, default="")
    turn_lease_until = models.DateTimeField(null=True, blank=True)
    turn_cancel_requested = models.BooleanField(default=False)
    origin = models.CharField(max_length=16, choices=Origin.choices, default=Origin.LIVE)
    # The model its turns ask, one the server lists (services.conversation_model_set); "" for
    # the owner's default (talorys.owner.selectors.provider_config), whatever it is then.
    model = models.CharField(max_length=MODEL_MAX, blank=True, default="")
    # The token of the /v1 client that started it (agent/completions/admission.py counts a
    # token's new conversations per day by it); None for every other conversation, and once
    # the token is deleted. Not in a backup: tokens are not exported.
    api_token = models.ForeignKey(
        ApiToken, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    # deleted_at (Binnable): in the bin, hidden from lists, and it takes no turns.

    class Meta:
        ordering = ["-updated_at", "-id"]

    def __str__(self) -> str:
        return self.title or f"Conversation {self.pk}"


class Message(models.Model):
    class Role(models.TextChoices):
        USER = "user"
        ASSISTANT = "assistant"

    class Status(models.TextChoices):
        STREAMING = "streaming"
        COMPLETE = "complete"
        CANCELLED = "cancelled"
        ERROR = "error"

    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, related_name="messages"
    )
    role = models.CharField(max_length=10, choices=Role.choices)
    content = models.TextField(blank=True, default="")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.COMPLETE)
    origin = models.CharField(max_length=16, choices=Origin.choices, default=Origin.LIVE)
    # One executor.ToolActivity per tool call, in order.
    tool_activity = models.JSONField(default=list, blank=True)
    error_code = models.CharField(max_length=32, blank=True, default="")
    # What the owner was told when the reply failed (the live ``error`` event's message).
    error_message = models.TextField(blank=True, default="")
    # The message it follows (None: the conversation's first). Messages form a tree: an edit
    # starts a sibling of the message edited, a regenerate a sibling of the reply (agent/
    # branches.py). The messages not ``replaced_at`` are one path from a root down to a leaf,
    # the active branch: what the page, the model and recall see.
    parent = models.ForeignKey(
        "self", on_delete=models.CASCADE, null=True, blank=True, related_name="children"
    )
    # The files the owner attached to this message (files/): their text goes to the model with
    # the message's turn (runner/inputs.py). A binned file stays listed; a purged one drops out.
    attachments = models.ManyToManyField("files.File", blank=True, related_name="messages")
    # Set when the message leaves the active branch (a regenerate, an edit, a switch to another
    # branch); cleared when a switch brings it back. It is kept, but out of the model's history,
    # the conversation's page and recall. Nothing is deleted.
    replaced_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # Set by every write, the reply's end included: the recall index re-reads what changed.
    updated_at = models.DateTimeField(auto_now=True)

    # Not a column: set by selectors.conversation_with_messages, what the model changed in this
    # reply's turn.
    changes: list[Change]
    # Not a column either: this message's id and its siblings' (the same parent), oldest first.
    siblings: list[int]

    class Meta:
        ordering = ["conversation_id", "id"]
        indexes = [
            models.Index(fields=["conversation", "id"]),
            models.Index(fields=["updated_at"]),
        ]

    def __str__(self) -> str:
        return f"{self.role}: {self.content[:60]}"


class CompletionRequest(models.Model):
    """A /v1 request kept so that its retry replays the answer instead of running the turn
    again (agent/completions/replay.py): by its ``Idempotency-Key`` for a day, or by its body
    for a short while. In the database, so every web process sees it."""

    KEY_MAX = 255

    api_token = models.ForeignKey(ApiToken, on_delete=models.CASCADE, related_name="+")
    # "key:<the Idempotency-Key header>" or "body:<the body's SHA-256>".
    key = models.CharField(max_length=KEY_MAX + 4)
    body_sha256 = models.CharField(max_length=64)
    # The reply, from the claim of the turn on; deleted with it (a failed chat's conversation).
    message = models.ForeignKey(
        Message, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    usage = models.JSONField(null=True, blank=True)  # as the first answer gave it
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["api_token", "key"], name="completion_request_key")
        ]
        indexes = [models.Index(fields=["api_token", "created_at"])]

    def __str__(self) -> str:
        return f"Completion request {self.pk}"
