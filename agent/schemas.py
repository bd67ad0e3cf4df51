"""Chat API bodies, WebSocket frames and conversation output. Inputs are never reused as outputs."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, Literal

from ninja import Schema
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, model_validator

from agent.activity import ShownActivity, shown_activity
from agent.attachments import MAX_ATTACHMENTS
from agent.models import Conversation, Message, Origin
from agent.rerun import rerun_chosen
from agent.services import MAX_MESSAGE_CHARS
from files.models import File
from files.selectors import file_link
from talorys.history.schemas import ChangeOut
from talorys.lib.markdown import render_markdown
from talorys.lib.search import QUERY_MAX
from talorys.web.schemas import NOT_NULL, Id, In, QueryText


class _TurnAsk(BaseModel):
    """What a chat request asks of a turn, over either transport (``turn_request``)."""

    conversation_id: int | None = None
    # Ignored by a retry and a regenerate: both re-run the last owner message. An edit's new text.
    text: str = Field("", max_length=MAX_MESSAGE_CHARS)
    # At most one of these (services.turn_begin): retry a failed or stopped last reply,
    # regenerate a complete one, or edit one of the owner's messages and run it again (a new
    # branch from there: agent/rerun.py).
    retry: bool = False
    regenerate: bool = False
    edit: bool = False
    # With regenerate, optional: the reply regenerated, refused unless it is the last one. With
    # edit: the owner message edited (any on the branch shown; without it, the last one).
    message_id: Id | None = None
    # A new conversation's model (one GET /api/models lists; null: the default). An existing
    # conversation's is changed by PATCH /api/conversations/{id}.
    model: str | None = Field(None, max_length=Conversation.MODEL_MAX)
    # Files to attach to the owner's message (ids from POST /api/files), each a live file; a
    # retry or a regenerate keeps the message's own. Their text goes to the model with it.
    attachments: list[Id] = Field(default_factory=list, max_length=MAX_ATTACHMENTS)


class ChatIn(In, _TurnAsk):
    pass


class ChatCancelIn(In):
    conversation_id: int


class ChatCancelOut(Schema):
    cancelled: bool


def _one_at_least(schema: dict[str, Any]) -> None:
    """In's schema, with at least one property: an edit that changes nothing is refused."""
    texts = In.model_config.get("json_schema_extra")
    if callable(texts):
        texts(schema)  # type: ignore[call-arg]
    schema["minProperties"] = 1


class ConversationPatch(In):
    """A new title, a model (null or "" for the default), or both."""

    model_config = ConfigDict(json_schema_extra=_one_at_least)

    # Left out keeps it; null is refused (the schema has no null): a conversation has a title.
    title: Annotated[str | None, NOT_NULL] = Field(
        None, min_length=1, max_length=Conversation.TITLE_MAX
    )
    model: str | None = Field(None, max_length=Conversation.MODEL_MAX)

    @model_validator(mode="after")
    def _title_or_model(self) -> ConversationPatch:
        if "title" in self.model_fields_set and self.title is None:
            raise ValueError("title: must be text; a conversation always has a title")
        if not self.model_fields_set:
            raise ValueError("give a title, a model, or both")
        return self


class ConversationFilters(Schema):
    q: QueryText | None = Field(None, max_length=QUERY_MAX)


class ConversationOut(Schema):
    id: int
    title: str
    origin: Origin
    # The model its turns ask; null: the owner's default (GET /api/models).
    model: str | None
    created_at: dt.datetime
    updated_at: dt.datetime

    @staticmethod
    def resolve_model(conversation: Conversation) -> str | None:
        return conversation.model or None


class AttachmentOut(Schema):
    """A file attached to an owner's message, as the message shows it."""

    id: int
    name: str
    content_type: str
    size: int
    status: str
    # The file's content for the browser (files/urls.py); "" once the file is in the bin.
    url: str
    binned: bool

    @staticmethod
    def resolve_url(file: File) -> str:
        return "" if file.deleted_at else file_link(file.pk)

    @staticmethod
    def resolve_binned(file: File) -> bool:
        return file.deleted_at is not None


class MessageOut(Schema):
    id: int
    role: Message.Role
    content: str
    status: Message.Status
    # Each with its ``sentence`` for the owner (agent/activity.py), as the live ``tool`` event.
    tool_activity: list[dict[str, Any]]
    origin: Origin
    error_code: str
    # Why a failed reply failed, as the live ``error`` event said it.
    error_message: str
    # A reply's content rendered (talorys.lib.markdown); "" for the owner's, shown as text.
    html: str
    created_at: dt.datetime
    # What the model changed in this reply's turn, oldest first (each revertable).
    changes: list[ChangeOut] = []
    # The branches at this message (agent/branches.py): its id and those of the messages beside
    # it (an earlier or later edit of it, another version of the reply), oldest first. Show
    # another with POST /api/conversations/{id}/branch.
    siblings: list[int] = []
    # The files the owner attached to it, in the order given; [] on a reply.
    attachments: list[AttachmentOut] = []

    @staticmethod
    def resolve_attachments(obj: Message) -> list[File]:
        return list(obj.attachments.all()) if obj.role == Message.Role.USER else []

    @staticmethod
    def resolve_html(obj: Message) -> str:
        if obj.role != Message.Role.ASSISTANT or not obj.content.strip():
            return ""
        return render_markdown(obj.content)

    @staticmethod
    def resolve_tool_activity(obj: Message) -> list[ShownActivity]:
        return [shown_activity(activity) for activity in obj.tool_activity or []]


class BranchIn(In):
    # Any message of the conversation, on any branch: the branch through it is shown.
    message_id: Id


class ConversationDetailOut(ConversationOut):
    messages: list[MessageOut]


# --- WebSocket frames --------------------------------------------------------------------------


class _Frame(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class SendFrame(_Frame, _TurnAsk):
    type: Literal["send"]


class CancelFrame(_Frame):
    type: Literal["cancel"]
    conversation_id: int


class AttachFrame(_Frame):
    """Follow the conversation's running reply on this socket (agent/live/attach.py): the events
    after ``last_event_id``, or a snapshot first; one snapshot when none is running."""

    type: Literal["attach"]
    conversation_id: int
    last_event_id: str | None = Field(None, max_length=40)


Frame = Annotated[SendFrame | CancelFrame | AttachFrame, Field(discriminator="type")]


def turn_request(body: _TurnAsk) -> dict[str, Any]:
    """What runner.begin_turn takes from a chat request, over either transport: its switches as
    the one ``rerun`` (ValidationFailed when more than one is on)."""
    return {
        "conversation_id": body.conversation_id,
        "text": body.text,
        "rerun": rerun_chosen(retry=body.retry, regenerate=body.regenerate, edit=body.edit),
        "message_id": body.message_id,
        "model": body.model,
        "attachments": list(body.attachments),
    }


frame_adapter: TypeAdapter[SendFrame | CancelFrame | AttachFrame] = TypeAdapter(Frame)
