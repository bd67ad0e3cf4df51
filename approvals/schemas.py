import datetime as dt

from ninja import Schema
from pydantic import Field

from approvals.models import PendingAction

# A status of PendingAction, or "all".
_STATUS_FILTER = f"^({'|'.join([*PendingAction.Status.values, 'all'])})$"


class ApprovalFilters(Schema):
    status: str | None = Field(None, pattern=_STATUS_FILTER)
    conversation_id: int | None = None


class AuditFilters(Schema):
    action_id: int | None = None


class PendingActionOut(Schema):
    id: int
    tool: str
    target_id: int
    summary: str
    preview: str
    status: str
    error: str
    conversation_id: int | None
    message_id: int | None
    created_at: dt.datetime
    expires_at: dt.datetime
    decided_at: dt.datetime | None
    undo_until: dt.datetime | None
    undone_at: dt.datetime | None


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
