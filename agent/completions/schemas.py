"""The bodies of /v1/, as OpenAI's chat completions API has them: what its clients send (the
fields Talorys reads, and those it refuses rather than ignore: ``unsupported``; every other
field, such as ``temperature``, is accepted and ignored) and what they read back."""

from __future__ import annotations

from typing import Annotated, Any, Literal

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
    """One part of a message's content; only text parts are read (any other is refused)."""

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


class StreamOptions(_Lenient):
    include_usage: bool | None = False


class ResponseFormat(_Lenient):
    type: str = Field(max_length=40)


class CompletionIn(_Lenient):
    model: str = Field(max_length=200)
    messages: list[CompletionMessage] = Field(min_length=1, max_length=MAX_MESSAGES)
    stream: bool | None = False
    stream_options: StreamOptions | None = None
    # Read only to refuse what Talorys does not do (``unsupported``) instead of ignoring it.
    n: int | None = None
    tools: list[dict[str, Any]] | None = Field(None, max_length=MAX_PARTS)
    functions: list[dict[str, Any]] | None = Field(None, max_length=MAX_PARTS)
    response_format: ResponseFormat | None = None

    def include_usage(self) -> bool:
        return bool(self.stream and self.stream_options and self.stream_options.include_usage)

    def unsupported(self) -> tuple[str, str] | None:
        """The first parameter asking for what Talorys does not do, and why, or None: a client
        that sends one would otherwise take the answer for what it asked."""
        if self.n is not None and self.n != 1:
            return "n", "Talorys gives one answer per request: `n` must be 1."
        for param in ("tools", "functions"):
            if getattr(self, param):
                return param, (
                    f"Talorys runs its own tools and does not call a client's: send no `{param}`."
                )
        if self.response_format is not None and self.response_format.type != "text":
            return "response_format", (
                "Talorys answers in text only: `response_format` may only be `text`."
            )
        for m, message in enumerate(self.messages):
            parts = message.content if isinstance(message.content, list) else []
            for p, part in enumerate(parts):
                if part.type != "text":
                    return f"messages[{m}].content[{p}]", (
                        f"Talorys reads text only and its model is not given images or files: "
                        f"a `{part.type[:40]}` part cannot be read."
                    )
        return None


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


class UsageOut(Schema):
    """The tokens the turn spent: as the provider reported them, else estimated (replies.py)."""

    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class CompletionOut(Schema):
    id: str
    object: Literal["chat.completion"] = "chat.completion"
    created: int
    model: str
    choices: list[ChoiceOut]
    usage: UsageOut


class OpenAIErrorDetail(Schema):
    message: str
    type: str
    param: str | None
    code: str | None


class OpenAIErrorOut(Schema):
    """talorys/web/openai_errors.py builds it."""

    error: OpenAIErrorDetail
