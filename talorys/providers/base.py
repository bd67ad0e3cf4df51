"""The provider protocol: what every model client streams, vendor-neutral.

A provider turns (messages, tool specs) into a stream of events. Tool specs are
``talorys.lib.tools.Tool.spec()`` dicts; each adapter translates them to its wire format. Nothing
here imports an app: only talorys.lib, for the error root (docs/architecture.md, layers).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from talorys.lib.errors import AppError
from talorys.lib.validation import NUL, has_nul


@dataclass
class TextDelta:
    text: str


@dataclass
class ToolCall:
    id: str
    name: str
    # Parsed arguments, or None when the model sent something that is not a JSON object;
    # ``raw_arguments`` keeps what it sent so the executor can tell the model what was wrong.
    arguments: dict[str, Any] | None
    raw_arguments: str = ""


@dataclass
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass
class Finish:
    reason: str  # "stop", "tool_calls", "length", ...


ProviderEvent = TextDelta | ToolCall | Usage | Finish
# Whether the model may call tools in a step ("none": the last step of a turn must answer).
ToolChoice = Literal["auto", "none"]


@dataclass
class ChatMessage:
    role: Literal["system", "user", "assistant", "tool"]
    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)  # assistant messages
    tool_call_id: str = ""  # tool messages
    name: str = ""  # tool messages: the tool's name
    # User messages: images (data: URLs) sent beside the text, to a model that sees images.
    images: list[str] = field(default_factory=list)


def file_label(file_id: int, name: str, place: str = "") -> str:
    """How the system prompt labels an attached file or its passage: "[file 12: report.pdf, p. 3]"
    (``place``: "p. 3", a heading, or none). files/selectors.py writes it; the demo provider
    reads it back with FILE_LABEL (talorys/providers/demo/files.py)."""
    return f"[file {file_id}: {name}{', ' + place if place else ''}]"


# A passage's label on a line of its own; ``rest`` is the name and the place.
FILE_LABEL = re.compile(r"^\[file (?P<id>\d+): (?P<rest>.+)\]$", re.MULTILINE)


class ProviderError(AppError):
    """A model server's failure, with a stable kind; ``code`` (PROVIDER_<KIND>) is what clients
    and saved replies show. Answered 502 if one ever reaches the API: the fault is upstream."""

    status = 502
    # too_long: the step or the reply passed TALORYS_MAX_STEP_CHARS / TALORYS_MAX_REPLY_CHARS.
    KINDS = ("unreachable", "auth", "rate_limited", "bad_response", "timeout", "too_long")

    def __init__(self, kind: str, message: str) -> None:
        assert kind in self.KINDS, kind
        super().__init__(message)
        self.kind = kind
        self.code = f"PROVIDER_{kind.upper()}"


def without_nul(value: Any) -> Any:
    """``value`` with NUL characters removed from every string in it (dicts and lists too).

    PostgreSQL stores no NUL in text or jsonb, and a model may send one (as a raw byte or as
    ``\\u0000`` inside tool-call arguments); nothing a model says needs it.
    """
    if isinstance(value, str):
        return value.replace(NUL, "") if has_nul(value) else value
    if isinstance(value, dict):
        return {without_nul(key): without_nul(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [without_nul(item) for item in value]
    return value


@dataclass(frozen=True)
class ProviderConfig:
    base_url: str = ""
    model: str = ""
    api_key: str = field(default="", repr=False)  # kept out of logs and tracebacks
    connect_timeout: float = 10.0
    read_timeout: float = 120.0  # longest silence allowed between two streamed chunks

    @property
    def is_demo(self) -> bool:
        return not (self.base_url and self.model)


class Provider(Protocol):
    name: str
    is_demo: bool

    def stream(
        self,
        *,
        messages: list[ChatMessage],
        tools: list[dict[str, Any]],
        max_tokens: int,
        tool_choice: ToolChoice = "auto",
    ) -> AsyncIterator[ProviderEvent]:
        """Stream one model step. Raises ProviderError; never retries on its own."""
        ...

    async def aclose(self) -> None: ...
