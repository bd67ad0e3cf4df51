"""A client for OpenAI-compatible chat completions (OpenAI, OpenRouter, Ollama, vLLM, llama.cpp
server, Cloudflare Workers AI's compatible endpoint), streamed over SSE with ``httpx``.

One ``stream()`` call is one HTTP request and one model step. There are no retries: a failure is
a ``ProviderError`` whose kind the runner turns into a stable error code, and the runner (which
reserved a request from the owner's budget) decides what happens next.

Real servers bend the wire format; what is tolerated is listed where it is handled: repeated
tool-call ids and names, a legacy ``function_call`` field, SSE comments, ``data:`` without a
space, CRLF lines, usage-only chunks, missing usage, a missing ``[DONE]`` after a finish
reason, arguments that are not JSON, and a plain JSON completion instead of a stream.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any, Literal

import httpx
from django.conf import settings

from talorys.providers.base import (
    ChatMessage,
    Finish,
    ProviderConfig,
    ProviderError,
    ProviderEvent,
    TextDelta,
    ToolCall,
    Usage,
    without_nul,
)

# One SSE event or a non-streamed body larger than this is not a chat completion chunk.
MAX_EVENT_BYTES = 1_000_000
# How much of an error body is worth showing the owner.
ERROR_EXCERPT_CHARS = 300

_LEGACY_SLOT = "function_call"


@dataclass
class _CallSlot:
    id: str = ""
    name: str = ""
    arguments: str = ""


class _StepState:
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


class OpenAICompatProvider:
    name = "openai_compat"
    is_demo = False

    def __init__(
        self, config: ProviderConfig, *, transport: httpx.AsyncBaseTransport | None = None
    ) -> None:
        self.config = config
        self._transport = transport
        self._client: httpx.AsyncClient | None = None

    @property
    def url(self) -> str:
        return self.config.base_url.rstrip("/") + "/chat/completions"

    def _http(self) -> httpx.AsyncClient:
        # Made on first use so the client belongs to the event loop that streams with it.
        if self._client is None:
            self._client = httpx.AsyncClient(
                timeout=httpx.Timeout(
                    connect=self.config.connect_timeout,
                    read=self.config.read_timeout,
                    write=self.config.read_timeout,
                    pool=self.config.connect_timeout,
                ),
                transport=self._transport,
            )
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    def request_body(
        self,
        *,
        messages: list[ChatMessage],
        tools: list[dict[str, Any]],
        max_tokens: int,
        tool_choice: Literal["auto", "none"] = "auto",
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.config.model,
            "messages": [_wire_message(message) for message in messages],
            "stream": True,
            "stream_options": {"include_usage": True},
            "max_tokens": max_tokens,
        }
        # Several servers refuse ``tool_choice`` without ``tools``, so both or neither.
        if tools:
            body["tools"] = [{"type": "function", "function": spec} for spec in tools]
            body["tool_choice"] = tool_choice
        return body

    async def stream(
        self,
        *,
        messages: list[ChatMessage],
        tools: list[dict[str, Any]],
        max_tokens: int,
        tool_choice: Literal["auto", "none"] = "auto",
    ) -> AsyncIterator[ProviderEvent]:
        body = self.request_body(
            messages=messages, tools=tools, max_tokens=max_tokens, tool_choice=tool_choice
        )
        headers = {"Accept": "text/event-stream"}
        if self.config.api_key:
            headers["Authorization"] = f"Bearer {self.config.api_key}"
        state = _StepState()
        received_headers = False
        try:
            # Leaving this block for any reason (end, error, the consumer's cancellation or an
            # early ``aclose()``) closes the response, so an abandoned step stops the server too.
            async with self._http().stream("POST", self.url, json=body, headers=headers) as resp:
                received_headers = True
                await _raise_for_status(resp)
                content_type = resp.headers.get("content-type", "")
                if content_type.startswith("application/json"):
                    for event in _complete_body(await _read_capped(resp)):
                        yield event
                    return
                done = False
                async with aclosing(_sse_data(resp)) as stream:
                    async for data in stream:
                        if data.strip() == "[DONE]":
                            done = True
                            break
                        for text in _apply_chunk(state, data):
                            yield TextDelta(text)
                        if state.over:
                            raise state.too_long()
        except httpx.TimeoutException as error:
            if isinstance(error, httpx.ConnectTimeout):
                raise ProviderError(
                    "unreachable",
                    f"Could not connect to the model server at {self.config.base_url} within "
                    f"{self.config.connect_timeout:g} s.",
                ) from error
            raise ProviderError(
                "timeout",
                f"The model server went quiet for more than {self.config.read_timeout:g} s.",
            ) from error
        except (httpx.InvalidURL, httpx.UnsupportedProtocol) as error:
            raise ProviderError(
                "unreachable", f"The model base URL {self.config.base_url!r} is not usable."
            ) from error
        except httpx.TransportError as error:
            if received_headers:
                raise ProviderError(
                    "bad_response", f"The model server dropped the stream: {error}."
                ) from error
            raise ProviderError(
                "unreachable",
                f"Could not reach the model server at {self.config.base_url}: {error}.",
            ) from error
        except httpx.RequestError as error:  # e.g. a body that fails to decode
            raise ProviderError("bad_response", f"The model server's answer: {error}.") from error

        if state.chunks == 0:
            raise ProviderError(
                "bad_response",
                f"The model server answered {resp.status_code} without any completion "
                f"(content type: {content_type or 'none'}).",
            )
        if not done and state.finish_reason is None:
            raise ProviderError("bad_response", "The model stream ended before the model finished.")
        for event in state.closing_events():
            yield event


def _wire_message(message: ChatMessage) -> dict[str, Any]:
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
    return {"role": message.role, "content": message.content}


async def _raise_for_status(response: httpx.Response) -> None:
    if response.is_success:
        return
    detail = _error_detail(await _read_capped(response))
    status = response.status_code
    if status in (401, 403):
        raise ProviderError(
            "auth", f"The model server refused the API key ({status}){_suffix(detail)}"
        )
    if status == 429:
        retry_after = response.headers.get("retry-after")
        wait = f" Try again in {retry_after} s." if retry_after else ""
        raise ProviderError(
            "rate_limited", f"The model server is rate limiting requests{_suffix(detail)}{wait}"
        )
    raise ProviderError("bad_response", f"The model server answered {status}{_suffix(detail)}")


def _suffix(detail: str) -> str:
    return f": {detail}" if detail else "."


async def _read_capped(response: httpx.Response) -> bytes:
    body = b""
    async for piece in response.aiter_bytes():
        body += piece
        if len(body) > MAX_EVENT_BYTES:
            raise ProviderError("bad_response", "The model server sent an oversized body.")
    return body


def _error_detail(body: bytes) -> str:
    text = body.decode("utf-8", "replace").strip()
    try:
        payload = json.loads(text)
    except ValueError:
        return text[:ERROR_EXCERPT_CHARS]
    return _error_message(payload)[:ERROR_EXCERPT_CHARS]


def _error_message(payload: Any) -> str:
    if isinstance(payload, dict):
        for key in ("error", "message", "detail"):
            if key in payload:
                return _error_message(payload[key])
    if isinstance(payload, list) and payload:
        return _error_message(payload[0])
    return str(payload)


async def _sse_data(response: httpx.Response) -> AsyncIterator[str]:
    """The ``data`` of each server-sent event, as the lines arrive."""
    data_lines: list[str] = []
    size = 0
    # ``aiter_lines`` splits on LF, CRLF and CR alike.
    async for line in response.aiter_lines():
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


def _apply_chunk(state: _StepState, data: str) -> list[str]:
    """Fold one chunk into ``state``; return the text it carries."""
    try:
        chunk = json.loads(data)
    except (ValueError, RecursionError) as error:
        raise ProviderError(
            "bad_response", f"The model server sent a malformed chunk: {data[:80]!r}"
        ) from error
    if not isinstance(chunk, dict):
        raise ProviderError(
            "bad_response", f"The model server sent a malformed chunk: {data[:80]!r}"
        )
    if chunk.get("error"):
        detail = _error_message(chunk)[:ERROR_EXCERPT_CHARS]
        raise ProviderError("bad_response", f"The model server reported an error: {detail}")
    state.chunks += 1
    usage = chunk.get("usage")
    if isinstance(usage, dict):
        state.usage = _usage(usage)
    texts = []
    for choice in chunk.get("choices") or []:
        if not isinstance(choice, dict) or choice.get("index", 0) != 0:
            continue  # only the first choice is ever asked for
        delta = choice.get("delta") or choice.get("message") or {}
        content = delta.get("content")
        if isinstance(content, str) and content:
            # NUL is dropped where the model's text comes in, so nothing downstream (the saved
            # reply, tool arguments, titles, notifications) ever carries one to the database.
            content = state.take(without_nul(content))
            if content:
                texts.append(content)
        for position, call_delta in enumerate(delta.get("tool_calls") or []):
            if isinstance(call_delta, dict):
                _merge_call(state, state.slot_for(state.key_for(call_delta, position)), call_delta)
        legacy = delta.get("function_call")
        if isinstance(legacy, dict):
            _merge_call(state, state.slot_for(_LEGACY_SLOT), {"function": legacy})
        if choice.get("finish_reason"):
            state.finish_reason = choice["finish_reason"]
    return texts


def _merge_call(state: _StepState, slot: _CallSlot, delta: dict[str, Any]) -> None:
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


def _complete_body(body: bytes) -> list[ProviderEvent]:
    """A server that ignored ``stream: true`` and sent one JSON completion."""
    try:
        payload = json.loads(body)
    except ValueError as error:
        raise ProviderError("bad_response", "The model server sent malformed JSON.") from error
    if not isinstance(payload, dict) or not payload.get("choices"):
        detail = _error_message(payload)[:ERROR_EXCERPT_CHARS] if payload else "empty body"
        raise ProviderError("bad_response", f"The model server sent no completion: {detail}")
    state = _StepState()
    text = "".join(_apply_chunk(state, body.decode("utf-8", "replace")))
    if state.over:
        raise state.too_long()
    return ([TextDelta(text)] if text else []) + state.closing_events()
