import datetime as dt

from ninja import Schema
from pydantic import Field

from approvals import selectors
from approvals.models import PendingAction
from talorys.lib.diff import DiffRun, Op

# A status of PendingAction, or "all".
_STATUS_FILTER = f"^({'|'.join([*PendingAction.Status.values, 'all'])})$"


class ApprovalFilters(Schema):
    status: str | None = Field(None, pattern=_STATUS_FILTER)
    conversation_id: int | None = None


class AuditFilters(Schema):
    action_id: int | None = None


class DiffRunOut(Schema):
    op: Op
    text: str


class PendingActionOut(Schema):
    id: int
    tool: str
    target_id: int
    summary: str
    preview: str
    status: str
    error: str
    proposed_by: str = Field(
        description="Who proposed it, in words: the chat, an automation, an MCP client or a "
        "/v1 client by its token's name."
    )
    conversation_id: int | None
    message_id: int | None
    created_at: dt.datetime
    expires_at: dt.datetime
    decided_at: dt.datetime | None
    undo_until: dt.datetime | None
    undone_at: dt.datetime | None
    diff: list[DiffRunOut] = Field(
        default_factory=list,
        description="For a rewrite: the word diff of the current text and the proposed one.",
    )

    @staticmethod
    def resolve_status(action: PendingAction) -> str:
        return selectors.pending_action_status(action)

    @staticmethod
    def resolve_diff(action: PendingAction) -> list[DiffRun]:
        return selectors.pending_action_diff(action=action)


class ApprovalEventOut(Schema):
    id: int
    action_ref: int
    tool: str
    target_id: int
    summary: str
    kind: str
    actor: str
    detail: str
    at: dt.datetime


class PushDecisionIn(Schema):
    """What the service worker posts from an approval's notification (approvals/push_decision.py)."""

    decision: str = Field(pattern="^(approve|reject)$")
    capability: str = Field(min_length=1, max_length=64)


class PushDecisionOut(Schema):
    """The decided action, and the notification's new words for the worker to show."""

    action_id: int
    status: str
    title: str
    body: str
