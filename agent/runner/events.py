"""What a turn tells its transport (the events), and what it has said and spent so far.

Both transports send the events as they are: the WebSocket as JSON frames, the chat API as
server-sent events named by ``type``. Every event carries its ``conversation_id``, so one socket
can follow several turns.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal, TypedDict

from agent.activity import ShownActivity
from agent.executor import ToolActivity
from agent.models import Message
from agent.runner.phases import Phases


class TitleEvent(TypedDict):
    """A new conversation's title (the first words of the owner's message), first; after the
    first reply's ``done``, possibly another: the title the model gave it (runner/title.py)."""

    type: Literal["title"]
    conversation_id: int
    title: str


class StartEvent(TypedDict):
    type: Literal["start"]
    conversation_id: int
    message_id: int  # the reply's
    user_message_id: int
    # Taken out by a regenerate or an edit (kept in the database, no longer shown), oldest first.
    replaced_message_ids: list[int]


class TextEvent(TypedDict):
    type: Literal["text"]
    conversation_id: int
    message_id: int
    delta: str


class ToolEvent(TypedDict):
    type: Literal["tool"]
    conversation_id: int
    message_id: int
    activity: ShownActivity  # with its sentence for the owner (agent/activity.py)


class ErrorEvent(TypedDict):
    """Also what the socket answers a frame it refuses, with or without a conversation."""

    type: Literal["error"]
    conversation_id: int | None
    code: str
    message: str


class TurnUsage(TypedDict):
    """The tokens a turn spent, all its model steps together: each step's as its provider
    reported them, or estimated from the characters (agent/context.py) for a step whose provider
    reported none (the demo never does); ``estimated`` when any step's were."""

    prompt_tokens: int
    completion_tokens: int
    estimated: bool


class DoneEvent(TypedDict):
    type: Literal["done"]
    conversation_id: int
    message_id: int
    status: Message.Status
    html: str  # the reply as saved, rendered (talorys.lib.markdown), to replace the streamed text
    usage: TurnUsage


TurnEvent = TitleEvent | StartEvent | TextEvent | ToolEvent | ErrorEvent | DoneEvent


def error_event(code: str, message: str, conversation_id: int | None = None) -> ErrorEvent:
    return {"type": "error", "conversation_id": conversation_id, "code": code, "message": message}


@dataclass
class TurnState:
    """What the turn has said, done and spent so far; saved as the reply when it ends."""

    text: str = ""
    tool_activity: list[ToolActivity] = field(default_factory=list)
    input_tokens: int = 0  # as the provider reported them: the owner's usage counts these
    output_tokens: int = 0
    # The steps whose provider reported no usage, estimated (TurnUsage).
    estimated_input_tokens: int = 0
    estimated_output_tokens: int = 0
    requests: int = 0  # provider calls made (each reserved a request of every budget)
    status: Message.Status = Message.Status.STREAMING
    error_code: str = ""
    error_message: str = ""
    # Where the time went before the first text (agent/runner/phases.py).
    phases: Phases = field(default_factory=Phases)
    # Whether a page of the owner's follows the turn (stream_turn's ``watched``).
    watched: Callable[[], Awaitable[bool]] | None = None

    def usage(self) -> TurnUsage:
        return {
            "prompt_tokens": self.input_tokens + self.estimated_input_tokens,
            "completion_tokens": self.output_tokens + self.estimated_output_tokens,
            "estimated": bool(self.estimated_input_tokens or self.estimated_output_tokens),
        }

    def fail(self, code: str, message: str) -> None:
        self.status = Message.Status.ERROR
        self.error_code = code
        self.error_message = message
