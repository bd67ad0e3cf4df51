"""The OpenAI chat-completions wire format: messages out, and in, the server-sent events of a
streamed completion folded into text deltas, tool calls, usage and the finish.

Real servers bend the wire format; what is tolerated is listed where it is handled: repeated
tool-call ids and names, a legacy ``function_call`` field, SSE comments, ``data:`` without a
space, CRLF lines, usage-only chunks, missing usage, a missing ``[DONE]`` after a finish
reason, arguments that are not JSON, and a plain JSON completion instead of a stream.

Pure parsing: the HTTP client (openai_compat.py) feeds it lines and bodies.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import AsyncGenerator, AsyncIterable
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from talorys.providers.base import (
    ChatMessage,
    Finish,
    ProviderError,
    ProviderEvent,
    TextDelta,
    ToolCall,
    Usage,
    without_nul,
)
from talorys.providers.http_errors import ERROR_EXCERPT_CHARS, error_message

# One SSE event or a non-streamed body larger than this is not a chat completion chunk.
MAX_EVENT_BYTES = 1_000_000

_LEGACY_SLOT = "function_call"


@dataclass
class _CallSlot:
    id: str = ""
    name: str = ""
    arguments: str = ""


class StepState:
    """What one streamed step has said so far, assembled across chunks."""

    def __init__(self) -> None:
        self.slots: dict[int | str, _CallSlot] = {}
        self.finish_reason: str | None = None
        self.usage: Usage | None = None
        self.chunks = 0
        # Text and tool-call arguments so far, against TALORYS_MAX_STEP_CHARS: the server may
        # ignore max_tokens, and arguments pile up in memory until the step ends.
        self.chars = 0
        self.max_chars: int = settings.TALORYS_MAX_STEP_CHARS
        self.over = False

    def take(self, text: str) -> str:
        """The part of ``text`` that fits the step's cap; past it, ``over`` is set."""
        room = self.max_chars - self.chars
        if len(text) > room:
            self.over = True
            text = text[: max(0, room)]
        self.chars += len(text)
        return text

    def too_long(self) -> ProviderError:
        return ProviderError(
            "too_long",
            f"The model's answer passed {self.max_chars:,} characters in one step "
            "(TALORYS_MAX_STEP_CHARS); it was cut there.",
        )

    def slot_for(self, key: int | str) -> _CallSlot:
        return self.slots.setdefault(key, _CallSlot())

    def key_for(self, delta: dict[str, Any], position: int) -> int | str:
        index = delta.get("index")
        if isinstance(index, int):
            return index
        # Some servers omit ``index``: match the call by id, else continue the last call, else
        # fall back to its position in this chunk.
        call_id = delta.get("id")
        indexed = [key for key in self.slots if key != _LEGACY_SLOT]
        if call_id:
            for key in indexed:
                if self.slots[key].id == call_id:
                    return key
            return len(indexed)
        return indexed[-1] if indexed else position

    def closing_events(self) -> list[ProviderEvent]:
        """Assembled tool calls, usage when the server reported it, and the finish."""
        calls = self.tool_calls()
        events: list[ProviderEvent] = [*calls]
        if self.usage is not None:
            events.append(self.usage)
        events.append(Finish(_finish_reason(self.finish_reason, has_calls=bool(calls))))
        return events

    def tool_calls(self) -> list[ToolCall]:
        slots = dict(self.slots)
        # Servers that send the legacy field beside ``tool_calls`` describe the same call twice.
        if len(slots) > 1:
            slots.pop(_LEGACY_SLOT, None)
        calls = []
        # Indexed calls in index order; the legacy slot, when alone, needs no order.
        for _, slot in sorted(slots.items(), key=lambda item: str(item[0]).zfill(12)):
            if not slot.name and not slot.arguments:
                continue
            if not slot.name:
                raise ProviderError("bad_response", "The model sent a tool call without a name.")
            calls.append(
                ToolCall(
                    id=slot.id or f"call_{secrets.token_hex(6)}",
                    name=slot.name,
                    arguments=_parse_arguments(slot.arguments),
                    raw_arguments=slot.arguments,
                )
            )
        return calls


def wire_message(message: ChatMessage) -> dict[str, Any]:
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
    if message.role == "assistant" and message.tool_calls:
        return {
            "role": "assistant",
            "content": message.content or None,
            "tool_calls": [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {
                        "name": call.name,
                        # Arguments the model garbled go back as "{}": several servers parse
                        # them when rendering their chat template and reject the whole request.
                        # The tool result already tells the model what was wrong.
                        "arguments": json.dumps(call.arguments)
                        if call.arguments is not None
                        else "{}",
                    },
                }
                for call in message.tool_calls
            ],
        }
    if message.images:  # OpenAI's content parts: the text, then each image as a data URL
        parts: list[dict[str, Any]] = [{"type": "text", "text": message.content}]
        parts += [{"type": "image_url", "image_url": {"url": url}} for url in message.images]
        return {"role": message.role, "content": parts}
    return {"role": message.role, "content": message.content}


async def sse_data(lines: AsyncIterable[str]) -> AsyncGenerator[str, None]:
    """The ``data`` of each server-sent event, as the ``lines`` of the response arrive."""
    data_lines: list[str] = []
    size = 0
    # httpx's ``aiter_lines`` splits on LF, CRLF and CR alike.
    async for line in lines:
        if not line:
            if data_lines:
                yield "\n".join(data_lines)
                data_lines, size = [], 0
            continue
        if line.startswith(":"):  # comment, e.g. ": ping" keep-alives
            continue
        field, _, value = line.partition(":")
        if field != "data":  # event:, id:, retry: carry nothing a chat completion needs
            continue
        value = value.removeprefix(" ")
        size += len(value)
        if size > MAX_EVENT_BYTES:
            raise ProviderError("bad_response", "The model server sent an oversized event.")
        data_lines.append(value)
    if data_lines:  # a last event without its blank line
        yield "\n".join(data_lines)


def apply_chunk(state: StepState, data: str) -> list[str]:
    """Fold one chunk into ``state``; return the text it carries."""
    chunk = _chunk(data)
    state.chunks += 1
    usage = chunk.get("usage")
    if isinstance(usage, dict):
        state.usage = _usage(usage)
    texts = []
    for choice in chunk.get("choices") or []:
        if not isinstance(choice, dict) or choice.get("index", 0) != 0:
            continue  # only the first choice is ever asked for
        delta = choice.get("delta") or choice.get("message") or {}
        texts.extend(_text(state, delta.get("content")))
        for position, call_delta in enumerate(delta.get("tool_calls") or []):
            if isinstance(call_delta, dict):
                _merge_call(state, state.slot_for(state.key_for(call_delta, position)), call_delta)
        legacy = delta.get("function_call")
        if isinstance(legacy, dict):
            _merge_call(state, state.slot_for(_LEGACY_SLOT), {"function": legacy})
        if choice.get("finish_reason"):
            state.finish_reason = choice["finish_reason"]
    return texts


def _chunk(data: str) -> dict[str, Any]:
    """One event's JSON object, or ProviderError for a malformed chunk or a reported error."""
    try:
        chunk = json.loads(data)
    except (ValueError, RecursionError):
        chunk = None
    if not isinstance(chunk, dict):
        raise ProviderError(
            "bad_response", f"The model server sent a malformed chunk: {data[:80]!r}"
        )
    if chunk.get("error"):
        detail = error_message(chunk)[:ERROR_EXCERPT_CHARS]
        raise ProviderError("bad_response", f"The model server reported an error: {detail}")
    return chunk


def _text(state: StepState, content: Any) -> list[str]:
    """The text a delta carries, as kept within the step's budget (none or one piece)."""
    if not isinstance(content, str) or not content:
        return []
    # NUL is dropped where the model's text comes in, so nothing downstream (the saved reply,
    # tool arguments, titles, notifications) ever carries one to the database.
    content = state.take(without_nul(content))
    return [content] if content else []


def _merge_call(state: StepState, slot: _CallSlot, delta: dict[str, Any]) -> None:
    if isinstance(delta.get("id"), str) and delta["id"]:
        slot.id = without_nul(delta["id"])[:200]
    function = delta.get("function") or {}
    name = function.get("name")
    if isinstance(name, str) and name:
        name = without_nul(name)[:200]
        # Servers that repeat the name in every delta (or send it whole again) must not turn
        # "create_task" into "create_taskcreate_task"; a true fragment is appended.
        slot.name = name if name.startswith(slot.name) else slot.name + name
    arguments = function.get("arguments")
    if isinstance(arguments, dict):  # some servers send the object, not its JSON text
        state.chars -= len(slot.arguments)
        slot.arguments = state.take(json.dumps(without_nul(arguments)))
    elif isinstance(arguments, str):
        slot.arguments += state.take(without_nul(arguments))


def _parse_arguments(raw: str) -> dict[str, Any] | None:
    if not raw.strip():
        return {}  # tools without arguments often get an empty string
    try:
        parsed = json.loads(raw)
    except (ValueError, RecursionError):
        parsed = _repeated_object(raw)
    # A NUL written as "\\u0000" survives the raw text and comes back here.
    return without_nul(parsed) if isinstance(parsed, dict) else None


def _repeated_object(raw: str) -> Any:
    """Some servers resend the complete arguments in their last delta: '{..}{..}'."""
    text = raw.strip()
    try:
        parsed, end = json.JSONDecoder().raw_decode(text)
    except (ValueError, RecursionError):
        return None
    return parsed if text[end:].strip() == text[:end] else None


def _usage(usage: dict[str, Any]) -> Usage:
    def count(*keys: str) -> int:
        for key in keys:
            if isinstance(usage.get(key), int):
                return usage[key]
        return 0

    return Usage(
        input_tokens=count("prompt_tokens", "input_tokens"),
        output_tokens=count("completion_tokens", "output_tokens"),
    )


def _finish_reason(reason: str | None, *, has_calls: bool) -> str:
    if reason == "function_call":
        return "tool_calls"
    # Some servers say "stop" (or nothing) after emitting tool calls.
    if has_calls and reason in (None, "stop"):
        return "tool_calls"
    return reason or "stop"


def complete_body(body: bytes) -> list[ProviderEvent]:
    """A server that ignored ``stream: true`` and sent one JSON completion."""
    try:
        payload = json.loads(body)
    except ValueError as error:
        raise ProviderError("bad_response", "The model server sent malformed JSON.") from error
    if not isinstance(payload, dict) or not payload.get("choices"):
        detail = error_message(payload)[:ERROR_EXCERPT_CHARS] if payload else "empty body"
        raise ProviderError("bad_response", f"The model server sent no completion: {detail}")
    state = StepState()
    text = "".join(apply_chunk(state, body.decode("utf-8", "replace")))
    if state.over:
        raise state.too_long()
    return ([TextDelta(text)] if text else []) + state.closing_events()
