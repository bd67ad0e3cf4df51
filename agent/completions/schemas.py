"""The bodies of /v1/, as OpenAI's chat completions API has them: what its clients send (the
fields Talorys reads; every other field, such as ``temperature`` or ``tools``, is accepted and
ignored) and what they read back."""

from __future__ import annotations

from typing import Annotated, Literal

from ninja import Schema
from pydantic import ConfigDict, Field, field_validator

MODEL_ID = "talorys"
# A long chat resent whole stays under the body limit (TALORYS_MAX_BODY_BYTES) anyway.
MAX_MESSAGES = 1000
MAX_CONTENT_CHARS = 200_000
MAX_PARTS = 100


class _Lenient(Schema):
    # Clients send more than Talorys reads (name, tool_calls, cache_control...): ignored.
    model_config = ConfigDict(extra="ignore")


class ContentPart(_Lenient):
    """One part of a message's content; only text parts are read (an image is not)."""

    type: str = Field(max_length=40)
    text: str | None = Field(None, max_length=MAX_CONTENT_CHARS)


class CompletionMessage(_Lenient):
    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: (
        Annotated[str, Field(max_length=MAX_CONTENT_CHARS)]
        | Annotated[list[ContentPart], Field(max_length=MAX_PARTS)]
        | None
    ) = None

    @field_validator("content")
    @classmethod
    def _no_nul(cls, value: str | list[ContentPart] | None) -> str | list[ContentPart] | None:
        parts = [value] if isinstance(value, str) else [p.text or "" for p in value or []]
        if any("\x00" in part for part in parts):
            raise ValueError("must not contain NUL characters")
        return value

    def text(self) -> str:
        """The content as one text: a list's text parts joined by newlines."""
        if isinstance(self.content, list):
            return "\n".join(p.text for p in self.content if p.type == "text" and p.text)
        return self.content or ""


class CompletionIn(_Lenient):
    model: str = Field(max_length=200)
    messages: list[CompletionMessage] = Field(min_length=1, max_length=MAX_MESSAGES)
    stream: bool | None = False


class ModelOut(Schema):
    id: str
    object: Literal["model"] = "model"
    created: int
    owned_by: str


class ModelListOut(Schema):
    object: Literal["list"] = "list"
    data: list[ModelOut]


class AnswerMessageOut(Schema):
    role: Literal["assistant"] = "assistant"
    content: str


class ChoiceOut(Schema):
    index: int
    message: AnswerMessageOut
    finish_reason: Literal["stop"]


class CompletionOut(Schema):
    id: str
    object: Literal["chat.completion"] = "chat.completion"
    created: int
    model: str
    choices: list[ChoiceOut]


class OpenAIErrorDetail(Schema):
    message: str
    type: str
    param: str | None
    code: str | None


class OpenAIErrorOut(Schema):
    """talorys/web/openai_errors.py builds it."""

    error: OpenAIErrorDetail
