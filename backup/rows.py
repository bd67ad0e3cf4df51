"""The schema of each kind of row in a backup (backup/format.py): one pydantic model per kind,
its limits read from the Django model (declared once there).

NUL is refused everywhere (PostgreSQL cannot store it). Other control characters follow the
services' rule for one-line fields (names, titles, codes, sources; talorys/lib/validation.py
``one_line``): an older export may hold them, written before the services made every such field
one line, and its import makes them one line the same way (a line break or tab as a space, the
rest dropped) instead of refusing the file. Long text keeps every character but NUL: it is what
the export wrote (replies, results, older notes), and the pages escape it.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any

from django.conf import settings
from django.db import models
from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from agent.models import Conversation, Message, Origin
from agent.services import MAX_MESSAGE_CHARS
from approvals.models import ApprovalEvent, PendingAction
from automations.models import Automation, AutomationRun
from files.models import File, FilePassage
from memory.models import Memory, MemoryRevision
from talorys.history.models import Change
from talorys.lib.validation import NUL_REFUSED, has_nul, one_line
from talorys.notifications.models import Notification
from talorys.owner.models import SETTINGS_BOUNDS, OwnerSettings
from talorys.web.schemas import BoundedDate, BoundedDatetime, Id
from talorys.workspace.models import Note, Project, Task

# A JSON value (a schedule, a change's before and after...) nested deeper than this is refused.
JSON_DEPTH_MAX = 20
# The longest text any column takes (a note's content, a reply): backup/reader.py refuses a
# longer string wherever it is, before it is checksummed or checked.
TEXT_MAX = max(Note.CONTENT_MAX, MAX_MESSAGE_CHARS, settings.TALORYS_MAX_REPLY_CHARS)
# A file's bytes go in parts of this many (backup/contents.py), each base64 within TEXT_MAX.
CONTENT_PART_BYTES = 128 * 1024
CONTENT_PART_CHARS = 4 * -(-CONTENT_PART_BYTES // 3)  # base64: 4 characters per 3 bytes, rounded up
SHA256 = r"^[0-9a-f]{64}$"


def _no_nul(value: str) -> str:
    if has_nul(value):
        raise ValueError(NUL_REFUSED)
    return value


def _one_line(value: str) -> str:
    return one_line(_no_nul(value))


# What a field of text is: one line, or long text (see the module docstring).
ONE_LINE = AfterValidator(_one_line)
LONG_TEXT = AfterValidator(_no_nul)


def _width(model: type[models.Model], name: str) -> int:
    """The column's own max_length: declared once, on the model."""
    width = getattr(model._meta.get_field(name), "max_length", None)
    assert isinstance(width, int)
    return width


def one_of(choices: type[models.TextChoices] | type[models.IntegerChoices]) -> AfterValidator:
    """One of the model's choices, exactly."""
    values = list(choices.values)

    def check(value: Any) -> Any:
        if value not in values:
            raise ValueError(f"must be one of {', '.join(map(str, values))}")
        return value

    return AfterValidator(check)


def _json_safe(value: Any, depth: int = 0) -> Any:
    """JSON the database can hold: no NUL anywhere (jsonb refuses it), not absurdly deep."""
    if depth > JSON_DEPTH_MAX:
        raise ValueError(f"is nested deeper than {JSON_DEPTH_MAX} levels")
    if isinstance(value, str):
        return _no_nul(value)
    if isinstance(value, dict):
        for key, item in value.items():
            _no_nul(key)
            _json_safe(item, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _json_safe(item, depth + 1)
    return value


Json = Annotated[Any, AfterValidator(_json_safe)]
JsonObject = Annotated[dict[str, Any], AfterValidator(_json_safe)]
JsonList = Annotated[list[Any], AfterValidator(_json_safe)]
Ref = Id | None

# The largest id an import installs. Ids are 64-bit, and each table's next id follows the
# largest one here (importer.py resets PostgreSQL's sequences; SQLite numbers past its largest):
# a row at 2**63 - 1 left no id for the next task (PostgreSQL's sequence at its end, SQLite
# "database or disk is full"), for good. 2**31 - 1 is far past what one person keeps, and leaves
# creation room for ever.
ID_MAX = 2**31 - 1


def _importable_id(value: int) -> int:
    if value > ID_MAX:
        raise ValueError(
            f"is {value}, above {ID_MAX}, the largest id an import takes (past it, nothing "
            "new could be created here)"
        )
    return value


RowId = Annotated[int, Field(ge=1), AfterValidator(_importable_id)]


class Row(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=False)

    id: RowId


class BinnableRow(Row):
    """A kind the owner keeps, with the bin: when made, last changed, binned (or not)."""

    created_at: BoundedDatetime
    updated_at: BoundedDatetime
    deleted_at: BoundedDatetime | None = None


class ProjectRow(BinnableRow):
    name: Annotated[str, Field(max_length=Project.NAME_MAX), ONE_LINE]
    description: Annotated[str, Field(max_length=Project.DESCRIPTION_MAX), LONG_TEXT] = ""


class TaskRow(BinnableRow):
    title: Annotated[str, Field(max_length=Task.TITLE_MAX), ONE_LINE]
    details: Annotated[str, Field(max_length=Task.DETAILS_MAX), LONG_TEXT] = ""
    status: Annotated[str, one_of(Task.Status)]
    priority: Annotated[int, one_of(Task.Priority)]
    due_at: BoundedDatetime | None = None
    project_id: Ref = None
    completed_at: BoundedDatetime | None = None
    # How it repeats (talorys/lib/schedules.py, checked in backup/checks.py); absent from
    # earlier files, which hold no repeating task.
    repeat: JsonObject | None = None


class NoteRow(BinnableRow):
    title: Annotated[str, Field(max_length=Note.TITLE_MAX), ONE_LINE]
    content: Annotated[str, Field(max_length=Note.CONTENT_MAX), LONG_TEXT] = ""


class FileRow(BinnableRow):
    """A file's record; its bytes are the ``file_contents`` rows of the same sha256."""

    name: Annotated[str, Field(max_length=File.NAME_MAX), ONE_LINE]
    content_type: Annotated[str, Field(max_length=_width(File, "content_type")), ONE_LINE]
    size: int = Field(ge=0, le=2**63 - 1)
    sha256: Annotated[str, Field(pattern=SHA256)]
    status: Annotated[str, one_of(File.Status)]
    reason: Annotated[str, Field(max_length=File.REASON_MAX), ONE_LINE] = ""
    pages: int | None = Field(None, ge=0, le=2**31 - 1)
    text_chars: int = Field(0, ge=0, le=2**31 - 1)


class FilePassageRow(Row):
    file_id: Id
    index: int = Field(ge=0, le=2**31 - 1)
    page: int | None = Field(None, ge=0, le=2**31 - 1)
    heading: Annotated[str, Field(max_length=FilePassage.HEADING_MAX), ONE_LINE] = ""
    text: Annotated[str, Field(max_length=TEXT_MAX), LONG_TEXT]


class FileContentRow(Row):
    """One part of a file's bytes, base64 (backup/contents.py): ``part`` of ``parts``, in order."""

    sha256: Annotated[str, Field(pattern=SHA256)]
    part: int = Field(ge=0, le=2**31 - 1)
    parts: int = Field(ge=1, le=2**31 - 1)
    data: Annotated[str, Field(max_length=CONTENT_PART_CHARS, pattern=r"^[A-Za-z0-9+/]*={0,2}$")]


class MemoryRow(BinnableRow):
    text: Annotated[str, Field(max_length=Memory.TEXT_MAX), LONG_TEXT]
    category: Annotated[str, one_of(Memory.Category)]
    source: Annotated[str, one_of(Memory.Source)]
    valid_from: BoundedDate | None = None
    valid_to: BoundedDate | None = None
    superseded_by_id: Ref = None
    superseded_at: BoundedDatetime | None = None
    conflicts_with_id: Ref = None


class MemoryRevisionRow(Row):
    memory_id: Id
    action: Annotated[str, one_of(MemoryRevision.Action)]
    text: Annotated[str, Field(max_length=Memory.TEXT_MAX), LONG_TEXT]
    category: Annotated[str, one_of(Memory.Category)]
    source: Annotated[str, one_of(Memory.Source)]
    valid_from: BoundedDate | None = None
    valid_to: BoundedDate | None = None
    superseded_by: Ref = None
    actor: Annotated[str, Field(max_length=_width(MemoryRevision, "actor")), ONE_LINE] = ""
    conversation_id: Ref = None
    message_id: Ref = None
    created_at: BoundedDatetime


class NotificationRow(Row):
    title: Annotated[str, Field(max_length=Notification.TITLE_MAX), ONE_LINE]
    body: Annotated[str, Field(max_length=Notification.BODY_MAX), LONG_TEXT] = ""
    kind: Annotated[str, one_of(Notification.Kind)]
    source: Annotated[str, Field(max_length=_width(Notification, "source")), ONE_LINE] = ""
    created_at: BoundedDatetime
    read_at: BoundedDatetime | None = None


class AutomationRow(Row):
    name: Annotated[str, Field(max_length=Automation.NAME_MAX), ONE_LINE]
    kind: Annotated[str, one_of(Automation.Kind)]
    message: Annotated[str, Field(max_length=Automation.MESSAGE_MAX), LONG_TEXT] = ""
    schedule: JsonObject
    enabled: bool
    origin: Annotated[str, one_of(Automation.Origin)]
    version: int = Field(ge=1, le=2**31 - 1)
    next_run_at: BoundedDatetime | None = None
    armed_time_zone: Annotated[
        str, Field(max_length=_width(Automation, "armed_time_zone")), ONE_LINE
    ] = ""
    run_count: int = Field(ge=0, le=2**31 - 1)
    last_run_at: BoundedDatetime | None = None
    last_status: Annotated[str, AfterValidator(lambda v: v and _status(v))] = ""
    last_result: Annotated[str, Field(max_length=Notification.BODY_MAX), LONG_TEXT] = ""
    last_error: Annotated[str, Field(max_length=Notification.BODY_MAX), LONG_TEXT] = ""
    cancelled_at: BoundedDatetime | None = None
    deleted_at: BoundedDatetime | None = None
    created_at: BoundedDatetime
    updated_at: BoundedDatetime


def _status(value: str) -> str:
    if value not in Automation.Status.values:
        raise ValueError(f"must be empty or one of {', '.join(Automation.Status.values)}")
    return value


class AutomationRunRow(Row):
    automation_id: Id
    slot: BoundedDatetime
    status: Annotated[str, one_of(AutomationRun.Status)]
    started_at: BoundedDatetime
    lease_until: BoundedDatetime | None = None
    finished_at: BoundedDatetime | None = None
    result: Annotated[str, Field(max_length=Notification.BODY_MAX), LONG_TEXT] = ""
    error: Annotated[str, Field(max_length=Notification.BODY_MAX), LONG_TEXT] = ""
    usage: JsonObject = Field(default_factory=dict)
    notification_id: Ref = None
    conversation_id: Ref = None  # a scheduled prompt's answer; absent from earlier files


class ConversationRow(BinnableRow):
    title: Annotated[str, Field(max_length=Conversation.TITLE_MAX), ONE_LINE] = ""
    title_source: Annotated[str, one_of(Conversation.TitleSource)]
    # Exported for the record; an import never installs a summary (see importer.py).
    summary: Annotated[str, Field(max_length=MAX_MESSAGE_CHARS), LONG_TEXT] = ""
    summary_upto: Ref = None
    origin: Annotated[str, one_of(Origin)]
    # Exported for the record; an import never installs it (format.py), as the settings' model.
    model: Annotated[str, Field(max_length=Conversation.MODEL_MAX), ONE_LINE] = ""


class MessageRow(Row):
    conversation_id: Id
    role: Annotated[str, one_of(Message.Role)]
    content: Annotated[
        str, Field(max_length=max(MAX_MESSAGE_CHARS, settings.TALORYS_MAX_REPLY_CHARS)), LONG_TEXT
    ] = ""
    status: Annotated[str, one_of(Message.Status)]
    origin: Annotated[str, one_of(Origin)]
    tool_activity: JsonList = Field(default_factory=list)
    error_code: Annotated[str, Field(max_length=_width(Message, "error_code")), ONE_LINE] = ""
    error_message: Annotated[str, Field(max_length=Notification.BODY_MAX), LONG_TEXT] = ""
    # The message it follows (agent/branches.py); absent from a file written before messages
    # had links (backup/lineage.py links those).
    parent_id: Ref = None
    replaced_at: BoundedDatetime | None = None
    created_at: BoundedDatetime
    updated_at: BoundedDatetime


class MessageAttachmentRow(Row):
    """A file attached to an owner's message (agent.Message.attachments)."""

    message_id: Id
    file_id: Id


class PendingActionRow(Row):
    tool: Annotated[str, Field(max_length=_width(PendingAction, "tool")), ONE_LINE]
    target_id: int = Field(ge=-(2**63), le=2**63 - 1)
    summary: Annotated[str, Field(max_length=PendingAction.SUMMARY_MAX), ONE_LINE]
    preview: Annotated[str, Field(max_length=Note.CONTENT_MAX), LONG_TEXT] = ""
    status: Annotated[str, one_of(PendingAction.Status)]
    error: Annotated[str, Field(max_length=Notification.BODY_MAX), LONG_TEXT] = ""
    proposed_by: Annotated[
        str, Field(max_length=_width(PendingAction, "proposed_by")), ONE_LINE
    ] = ""
    conversation_id: Ref = None
    message_id: Ref = None
    created_at: BoundedDatetime
    expires_at: BoundedDatetime
    decided_at: BoundedDatetime | None = None
    undone_at: BoundedDatetime | None = None
    # Approval metadata: accepted so that a file carrying it is not refused, and never installed
    # (importer.py strips it): no imported action can be approved or undone.
    snapshot: Any = None
    payload: Any = None
    result: Any = None
    undo_until: Any = None
    decided_by_id: Any = None


class ApprovalEventRow(Row):
    action_id: Ref = None
    action_ref: int = Field(ge=-(2**63), le=2**63 - 1)
    tool: Annotated[str, Field(max_length=_width(ApprovalEvent, "tool")), ONE_LINE]
    target_id: int = Field(ge=-(2**63), le=2**63 - 1)
    summary: Annotated[str, Field(max_length=PendingAction.SUMMARY_MAX), ONE_LINE]
    kind: Annotated[str, one_of(ApprovalEvent.Kind)]
    actor: Annotated[str, Field(max_length=_width(ApprovalEvent, "actor")), ONE_LINE]
    detail: Annotated[str, Field(max_length=Notification.BODY_MAX), LONG_TEXT] = ""
    at: BoundedDatetime


class ChangeRow(Row):
    kind: Annotated[str, Field(max_length=_width(Change, "kind")), ONE_LINE]
    object_id: int = Field(ge=-(2**63), le=2**63 - 1)
    action: Annotated[str, one_of(Change.Action)]
    title: Annotated[str, Field(max_length=_width(Change, "title")), ONE_LINE] = ""
    before: Json = None
    after: Json = None
    detail: JsonObject = Field(default_factory=dict)
    source: Annotated[str, Field(max_length=_width(Change, "source")), ONE_LINE]
    conversation_id: Ref = None
    message_id: Ref = None
    reverts_id: Ref = None
    created_at: BoundedDatetime


def _bounded(name: str) -> Any:
    low, high = SETTINGS_BOUNDS[name]
    return Field(ge=low, le=high)


class SettingsRow(Row):
    time_zone: Annotated[str, Field(max_length=OwnerSettings.TIME_ZONE_MAX), ONE_LINE]
    time_zone_confirmed: bool = False
    model_base_url: Annotated[str, Field(max_length=OwnerSettings.URL_MAX), ONE_LINE] = ""
    model_name: Annotated[str, Field(max_length=OwnerSettings.MODEL_NAME_MAX), ONE_LINE] = ""
    # The limits within the bounds the settings keep (the model's, as the table's constraints).
    daily_ai_requests: int = _bounded("daily_ai_requests")
    daily_scheduled_ai_requests: int = _bounded("daily_scheduled_ai_requests")
    daily_embedding_requests: int = _bounded("daily_embedding_requests")
    max_steps_per_turn: int = _bounded("max_steps_per_turn")
    max_tool_calls_per_turn: int = _bounded("max_tool_calls_per_turn")
    max_output_tokens: int = _bounded("max_output_tokens")
    max_context_tokens: int = _bounded("max_context_tokens")
    model_sees_images: bool = False
    semantic_enabled: bool = True
    embeddings_base_url: Annotated[str, Field(max_length=OwnerSettings.URL_MAX), ONE_LINE] = ""
    embeddings_model: Annotated[str, Field(max_length=OwnerSettings.MODEL_NAME_MAX), ONE_LINE] = ""
    quiet_hours_start: dt.time | None = None
    quiet_hours_end: dt.time | None = None
    updated_at: BoundedDatetime
