"""A client for OpenAI-compatible chat completions (OpenAI, OpenRouter, Ollama, vLLM, llama.cpp
server, Cloudflare Workers AI's compatible endpoint), streamed over SSE with ``httpx``.

One ``stream()`` call is one HTTP request and one model step. There are no retries: a failure is
a ``ProviderError`` whose kind the runner turns into a stable error code, and the runner (which
reserved a request from the owner's budget) decides what happens next.

How the wire format is written and read, and what it tolerates, is openai_wire.py.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing, suppress
from typing import Any

import httpx

from talorys.providers.base import (
    ChatMessage,
    ProviderConfig,
    ProviderError,
    ProviderEvent,
    TextDelta,
    ToolChoice,
)
from talorys.providers.http_errors import bearer_headers, raise_for_status, transport_error
from talorys.providers.openai_wire import (
    MAX_EVENT_BYTES,
    StepState,
    apply_chunk,
    complete_body,
    sse_data,
    wire_message,
)


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
        tool_choice: ToolChoice = "auto",
    ) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.config.model,
            "messages": [wire_message(message) for message in messages],
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
        tool_choice: ToolChoice = "auto",
    ) -> AsyncGenerator[ProviderEvent, None]:
        body = self.request_body(
            messages=messages, tools=tools, max_tokens=max_tokens, tool_choice=tool_choice
        )
        key = bearer_headers(self.config.api_key, server="model server")
        headers = {"Accept": "text/event-stream", **key}
        state = StepState()
        received_headers = False
        try:
            # Leaving this block for any reason (end, error, the consumer's cancellation or an
            # early ``aclose()``) closes the response, so an abandoned step stops the server too.
            async with self._http().stream("POST", self.url, json=body, headers=headers) as resp:
                received_headers = True
                if not resp.is_success:
                    raise_for_status(resp, await _read_capped(resp), server="model server")
                content_type = resp.headers.get("content-type", "")
                if content_type.startswith("application/json"):
                    for event in complete_body(await _read_capped(resp)):
                        yield event
                    return
                done = False
                async with aclosing(sse_data(resp.aiter_lines())) as stream:
                    async for data in stream:
                        if data.strip() == "[DONE]":
                            done = True
                            await _read_to_the_end(stream)
                            break
                        for text in apply_chunk(state, data):
                            yield TextDelta(text)
                        if state.over:
                            raise state.too_long()
        except httpx.HTTPError as error:
            raise self._transport_error(error, received_headers=received_headers) from error

        _check_step_finished(
            state, done=done, status_code=resp.status_code, content_type=content_type
        )
        for event in state.closing_events():
            yield event

    def _transport_error(self, error: httpx.HTTPError, *, received_headers: bool) -> ProviderError:
        """What a failed exchange with this server means, with its address and timeouts."""
        return transport_error(
            error,
            server="model server",
            base_url=self.config.base_url,
            connect_timeout=self.config.connect_timeout,
            read_timeout=self.config.read_timeout,
            received_headers=received_headers,
        )


def _check_step_finished(
    state: StepState, *, done: bool, status_code: int, content_type: str
) -> None:
    """Refuse a stream that ended with no completion at all, or before the model finished
    (neither [DONE] nor a finish reason)."""
    if state.chunks == 0:
        raise ProviderError(
            "bad_response",
            f"The model server answered {status_code} without any completion "
            f"(content type: {content_type or 'none'}).",
        )
    if not done and state.finish_reason is None:
        raise ProviderError("bad_response", "The model stream ended before the model finished.")


# After [DONE] the body has only its end to come (the chunked body's last chunk). A body left
# unread makes httpx close the connection instead of keeping it for the next request, and a new
# one costs every later step a connect (and, with a remote server, a TLS handshake): so it is
# read, for this long and this many events at most, before a server that says more is hung up on.
AFTER_DONE_SECONDS = 0.25
AFTER_DONE_EVENTS = 8


async def _read_to_the_end(stream: AsyncIterator[str]) -> None:
    """The rest of the body after [DONE]; the answer is complete, so nothing here is an error."""
    with suppress(StopAsyncIteration, TimeoutError, httpx.HTTPError, ProviderError):
        async with asyncio.timeout(AFTER_DONE_SECONDS):
            for _ in range(AFTER_DONE_EVENTS):
                await anext(stream)


async def _read_capped(response: httpx.Response) -> bytes:
    body = b""
    async for piece in response.aiter_bytes():
        body += piece
        if len(body) > MAX_EVENT_BYTES:
            raise ProviderError("bad_response", "The model server sent an oversized body.")
    return body
