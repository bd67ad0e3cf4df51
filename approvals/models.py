"""Pending actions: a destructive model call waiting for the owner, and the audit trail of every
proposal and decision.

The pending action refers to its conversation and message by id only: approvals sits below the
agent app (docs/architecture.md, layers) and must not depend on its models.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class PendingAction(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending"
        COMMITTED = "committed"  # approved and carried out
        REJECTED = "rejected"
        EXPIRED = "expired"
        FAILED = "failed"  # approved, but the target changed or vanished, or the commit failed
        UNDONE = "undone"  # committed, then restored by the owner
        WITHDRAWN = "withdrawn"  # a newer proposal for the same target took its place

    # The owner-readable summary, also kept on each audit line (ApprovalEvent.summary).
    SUMMARY_MAX = 500

    tool = models.CharField(max_length=64)
    target_id = models.BigIntegerField()
    snapshot = models.CharField(
        max_length=64, help_text="Hash of the target's fields when proposed"
    )
    payload = models.JSONField(default=dict, blank=True)
    summary = models.CharField(max_length=SUMMARY_MAX)
    preview = models.TextField(blank=True, default="")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    error = models.TextField(blank=True, default="")
    result = models.JSONField(
        default=dict, blank=True, help_text="What the commit did; undo reads it"
    )
    # Who proposed it, in words: "the chat", "the automation “Weekly review”", "the MCP client
    # “Laptop”", "the /v1 client “Open WebUI”" (services._proposed_by).
    proposed_by = models.CharField(max_length=200, blank=True, default="")
    conversation_id = models.BigIntegerField(null=True, blank=True, db_index=True)
    message_id = models.BigIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    decided_at = models.DateTimeField(null=True, blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    undo_until = models.DateTimeField(null=True, blank=True)
    undone_at = models.DateTimeField(null=True, blank=True)

    # Not stored: set by services.pending_action_propose when the proposal was already waiting
    # (a regenerated reply proposed it again) and this is that earlier action, kept.
    reused = False

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["status", "expires_at"])]
        constraints = [
            # One waiting proposal per tool and target: proposing it again reuses or replaces
            # the one waiting (services.pending_action_propose), so the owner is asked once.
            models.UniqueConstraint(
                fields=["tool", "target_id"],
                # NEW_TARGET (talorys/lib/tools.py): proposals that make something new.
                condition=models.Q(status="pending") & ~models.Q(target_id=0),
                name="pending_action_one_waiting_per_target",
            )
        ]

    def __str__(self) -> str:
        return f"{self.tool} #{self.target_id} ({self.status})"


class ApprovalEvent(models.Model):
    """One line of the audit trail. Kept when its pending action is pruned."""

    class Kind(models.TextChoices):
        PROPOSED = "proposed"
        COMMITTED = "committed"
        REJECTED = "rejected"
        EXPIRED = "expired"
        FAILED = "failed"
        UNDONE = "undone"
        WITHDRAWN = "withdrawn"
        PURGED = "purged"

    action = models.ForeignKey(
        PendingAction, null=True, blank=True, on_delete=models.SET_NULL, related_name="events"
    )
    action_ref = models.BigIntegerField(help_text="The action's id, kept after pruning")
    tool = models.CharField(max_length=64)
    target_id = models.BigIntegerField()
    summary = models.CharField(max_length=PendingAction.SUMMARY_MAX)
    kind = models.CharField(max_length=10, choices=Kind.choices)
    # "owner:<username>", "model" (a proposal from a turn), the source of any other proposer
    # ("automation:<id>", "mcp:<token prefix>"), or "system" (expiry, purge).
    actor = models.CharField(max_length=160)
    detail = models.TextField(blank=True, default="")
    at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-at", "-id"]

    def __str__(self) -> str:
        return f"{self.kind} {self.tool} #{self.target_id} by {self.actor}"


class DecisionCapability(models.Model):
    """The right to make one decision on one action from its Web Push notification
    (approvals/push_decision.py, with its threat model).

    Minted per push delivery, one per decision, when the push is sent; only the token's SHA-256
    is stored, the token itself travels only inside that push's end-to-end encrypted payload.
    It is spent (``used_at``) by the decision it makes, and refused once expired, spent, or once
    its action is no longer waiting.
    """

    class Decision(models.TextChoices):
        APPROVE = "approve"
        REJECT = "reject"

    action = models.ForeignKey(
        PendingAction, on_delete=models.CASCADE, related_name="decision_capabilities"
    )
    decision = models.CharField(max_length=7, choices=Decision.choices)
    token_hash = models.CharField(max_length=64, unique=True)
    snapshot = models.CharField(max_length=64, help_text="The action's snapshot when minted")
    # The push that carried it; a plain id (notifications sit below approvals, but a pruned
    # delivery must not take the capability's record with it).
    delivery_id = models.BigIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(db_index=True)
    used_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.decision} #{self.action_id} ({'used' if self.used_at else 'unused'})"
