"""Input and output schemas of the core API. Inputs are never reused as outputs."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any

from ninja import Schema
from pydantic import Field

from talorys.lib.schemas import BoundedDatetime, ExpectedVersion, Id, In, QueryText, one_of
from talorys.lib.search import QUERY_MAX
from talorys.workspace.models import Note, OwnerSettings, Project, Task
from talorys.workspace.selectors import (
    EmbeddingsProviderKind,
    ModelProviderKind,
    RecallMode,
    TaskDue,
)

# The limits and choices are the models': these read them, never restate them.
TaskStatus = Annotated[Task.Status, one_of(Task.Status)]


class ProjectRef(Schema):
    id: int
    name: str


class TaskIn(In):
    title: str = Field(min_length=1, max_length=Task.TITLE_MAX)
    details: str = Field("", max_length=Task.DETAILS_MAX)
    priority: int = Field(Task.Priority.NORMAL, ge=Task.Priority.LOW, le=Task.Priority.HIGH)
    due_at: BoundedDatetime | None = None
    project_id: Id | None = None


class TaskPatch(In):
    title: str | None = Field(None, min_length=1, max_length=Task.TITLE_MAX)
    details: str | None = Field(None, max_length=Task.DETAILS_MAX)
    status: TaskStatus | None = None
    priority: int | None = Field(None, ge=Task.Priority.LOW, le=Task.Priority.HIGH)
    due_at: BoundedDatetime | None = None
    project_id: Id | None = None
    version: ExpectedVersion = None


class TaskOut(Schema):
    id: int
    title: str
    details: str
    status: str
    priority: int
    due_at: dt.datetime | None
    project: ProjectRef | None
    completed_at: dt.datetime | None
    created_at: dt.datetime
    updated_at: dt.datetime
    version: int


class TaskFilters(Schema):
    status: TaskStatus | None = None
    project: Id | None = None
    due_before: BoundedDatetime | None = None
    due_after: BoundedDatetime | None = None
    due: TaskDue | None = None
    q: QueryText | None = Field(None, max_length=QUERY_MAX)


class ProjectIn(In):
    name: str = Field(min_length=1, max_length=Project.NAME_MAX)
    description: str = Field("", max_length=Project.DESCRIPTION_MAX)


class ProjectPatch(In):
    name: str | None = Field(None, min_length=1, max_length=Project.NAME_MAX)
    description: str | None = Field(None, max_length=Project.DESCRIPTION_MAX)
    version: ExpectedVersion = None


class ProjectOut(Schema):
    id: int
    name: str
    description: str
    created_at: dt.datetime
    updated_at: dt.datetime
    version: int


class NoteIn(In):
    title: str = Field(min_length=1, max_length=Note.TITLE_MAX)
    content: str = Field("", max_length=Note.CONTENT_MAX)


class NotePatch(In):
    title: str | None = Field(None, min_length=1, max_length=Note.TITLE_MAX)
    content: str | None = Field(None, max_length=Note.CONTENT_MAX)
    version: ExpectedVersion = None


class NoteOut(Schema):
    id: int
    title: str
    content: str
    created_at: dt.datetime
    updated_at: dt.datetime
    version: int


class SettingsPatch(In):
    """Send only what changes. API keys are write-only: a string sets one, "" clears it."""

    time_zone: str | None = Field(None, min_length=1, max_length=OwnerSettings.TIME_ZONE_MAX)
    model_base_url: str | None = Field(None, max_length=OwnerSettings.URL_MAX)
    model_name: str | None = Field(None, max_length=OwnerSettings.MODEL_NAME_MAX)
    model_api_key: str | None = Field(None, max_length=OwnerSettings.API_KEY_MAX)
    daily_ai_requests: int | None = None
    daily_scheduled_ai_requests: int | None = None
    daily_embedding_requests: int | None = None
    max_steps_per_turn: int | None = None
    max_tool_calls_per_turn: int | None = None
    max_output_tokens: int | None = None
    max_context_tokens: int | None = None
    semantic_enabled: bool | None = None
    embeddings_base_url: str | None = Field(None, max_length=OwnerSettings.URL_MAX)
    embeddings_model: str | None = Field(None, max_length=OwnerSettings.MODEL_NAME_MAX)
    embeddings_api_key: str | None = Field(None, max_length=OwnerSettings.API_KEY_MAX)
    quiet_hours_start: dt.time | None = None
    quiet_hours_end: dt.time | None = None


class SettingsOut(Schema):
    """The owner's settings. API keys never leave the server: only whether one is set."""

    time_zone: str
    # False until the owner (or the browser, at the first run) chose the zone.
    time_zone_confirmed: bool
    provider: ModelProviderKind
    model_base_url: str
    model_name: str
    model_api_key_set: bool
    daily_ai_requests: int
    daily_scheduled_ai_requests: int
    daily_embedding_requests: int
    max_steps_per_turn: int
    max_tool_calls_per_turn: int
    max_output_tokens: int
    max_context_tokens: int
    semantic_enabled: bool
    # The embedder semantic recall uses when on ("none": keyword only), and what recall is now.
    embeddings_provider: EmbeddingsProviderKind
    recall_mode: RecallMode
    embeddings_base_url: str
    embeddings_model: str
    embeddings_api_key_set: bool
    quiet_hours_start: dt.time | None
    quiet_hours_end: dt.time | None
    updated_at: dt.datetime


class ConnectionTestIn(In):
    """What to test, unsaved; each one left out is the stored setting's. No key: the stored
    key, and only when the URL is the stored one."""

    base_url: str | None = Field(None, max_length=OwnerSettings.URL_MAX)
    model: str | None = Field(None, max_length=OwnerSettings.MODEL_NAME_MAX)
    api_key: str | None = Field(None, max_length=OwnerSettings.API_KEY_MAX)


class ConnectionTestOut(Schema):
    ok: bool
    provider: str
    base_url: str
    model: str
    reply: str
    kind: str = Field(description="On failure: the provider error's kind (timeout, auth...).")
    code: str = Field(description="On failure: PROVIDER_<KIND>.")
    message: str
    elapsed_ms: int


class UsageCountersOut(Schema):
    ai_requests: int
    scheduled_ai_requests: int
    embedding_requests: int


class UsageDayOut(UsageCountersOut):
    day: dt.date
    input_tokens: int
    output_tokens: int


class UsageOut(Schema):
    today: UsageDayOut
    limits: UsageCountersOut
    remaining: UsageCountersOut
    days: list[UsageDayOut]


# --- the bin and the changes (talorys/workspace/history.py) ----------------------------------------------


class BinItemOut(Schema):
    kind: str
    id: int
    title: str
    deleted_at: dt.datetime
    deleted_by: str


class ChangeOut(Schema):
    id: int
    kind: str
    object_id: int
    action: str
    title: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    source: str
    conversation_id: int | None
    message_id: int | None
    reverts_id: int | None
    reverted: bool = False
    created_at: dt.datetime


class BinEmptyOut(Schema):
    purged: int
