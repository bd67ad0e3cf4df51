"""Chat API bodies, WebSocket frames and conversation output. Inputs are never reused as outputs."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, Literal

from ninja import Schema
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from agent.models import Message, Origin
from agent.services import MAX_MESSAGE_CHARS
from talorys.lib.schemas import In
from talorys.workspace.schemas import ChangeOut


class ChatIn(In):
    conversation_id: int | None = None
    # Ignored when retrying: a retry re-runs the last owner message.
    text: str = Field("", max_length=MAX_MESSAGE_CHARS)
    retry: bool = False


class ChatCancelIn(In):
    conversation_id: int


class ChatCancelOut(Schema):
    cancelled: bool


class ConversationOut(Schema):
    id: int
    title: str
    origin: Origin
    created_at: dt.datetime
    updated_at: dt.datetime


class MessageOut(Schema):
    id: int
    role: Message.Role
    content: str
    status: Message.Status
    tool_activity: list[dict[str, Any]]
    origin: Origin
    error_code: str
    created_at: dt.datetime
    # What the model changed in this reply's turn, oldest first (each revertable).
    changes: list[ChangeOut] = []


class ConversationDetailOut(ConversationOut):
    messages: list[MessageOut]


# --- WebSocket frames --------------------------------------------------------------------------


class _Frame(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class SendFrame(_Frame):
    type: Literal["send"]
    text: str = Field("", max_length=MAX_MESSAGE_CHARS)
    conversation_id: int | None = None
    retry: bool = False


class CancelFrame(_Frame):
    type: Literal["cancel"]
    conversation_id: int


Frame = Annotated[SendFrame | CancelFrame, Field(discriminator="type")]
frame_adapter: TypeAdapter[SendFrame | CancelFrame] = TypeAdapter(Frame)
