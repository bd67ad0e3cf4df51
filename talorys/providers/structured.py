"""One structured answer from an OpenAI-compatible chat model: a JSON object, not a stream.

For the small side questions a turn asks besides the conversation (the memory conflict check,
the conversation's title): one request in JSON mode (``response_format: json_object``, which
Ollama, vLLM, llama.cpp server, OpenAI and OpenRouter accept), a hard timeout (for the whole
answer, however it trickles in), no retries. ``text_completion`` asks without JSON mode, for a
model that refuses it or answers it with prose (the title falls back to it). Synchronous: its
callers are services running in a worker thread, outside any transaction.
"""

from __future__ import annotations

import functools
import json
import ssl
import time
from typing import Any

import httpx

from talorys.providers.base import ChatMessage, ProviderConfig, ProviderError, without_nul
from talorys.providers.http_errors import bearer_headers, read_answer, transport_error
from talorys.providers.openai_wire import MAX_EVENT_BYTES, wire_message


@functools.cache
def _tls() -> ssl.SSLContext:
    """httpx's default TLS context, made once per process: making it reads the whole CA bundle,
    which took more CPU than the rest of a title request (py-spy under benchmarks/load.py). A
    context is safe to share between clients and threads."""
    return httpx.create_ssl_context()


def _json_object(text: str) -> dict[str, Any]:
    text = text.strip()
    if text.startswith("```"):  # a fenced block, which some models send even in JSON mode
        text = text.strip("`").removeprefix("json").strip()
    try:
        value = json.loads(text)
    except ValueError as error:
        raise ProviderError("bad_response", f"The model's answer is not JSON: {error}.") from error
    if not isinstance(value, dict):
        raise ProviderError("bad_response", "The model's answer is not a JSON object.")
    return without_nul(value)


def json_completion(
    config: ProviderConfig,
    *,
    messages: list[ChatMessage],
    max_tokens: int = 300,
    timeout: float = 10.0,
    transport: httpx.BaseTransport | None = None,
) -> dict[str, Any]:
    """The JSON object the model answers. Raises ProviderError (timeout included)."""
    said = _answer(config, messages, max_tokens, timeout, transport, json_mode=True)
    return _json_object(said)


def text_completion(
    config: ProviderConfig,
    *,
    messages: list[ChatMessage],
    max_tokens: int = 300,
    timeout: float = 10.0,
    transport: httpx.BaseTransport | None = None,
) -> str:
    """The text the model answers, not in JSON mode. Raises ProviderError (timeout included)."""
    return without_nul(_answer(config, messages, max_tokens, timeout, transport, json_mode=False))


def _answer(
    config: ProviderConfig,
    messages: list[ChatMessage],
    max_tokens: int,
    timeout: float,
    transport: httpx.BaseTransport | None,
    *,
    json_mode: bool,
) -> str:
    body = _request_body(config, messages, max_tokens, json_mode=json_mode)
    headers = bearer_headers(config.api_key, server="model server")
    url = config.base_url.rstrip("/") + "/chat/completions"
    deadline = time.monotonic() + timeout
    try:
        with (
            httpx.Client(timeout=timeout, transport=transport, verify=_tls()) as client,
            client.stream("POST", url, json=body, headers=headers) as response,
        ):
            content = read_answer(
                response,
                server="model server",
                max_bytes=MAX_EVENT_BYTES,
                deadline=deadline,
                timeout=timeout,
            )
    except httpx.HTTPError as error:
        raise transport_error(
            error,
            server="model server",
            base_url=config.base_url,
            connect_timeout=timeout,
            read_timeout=timeout,
            received_headers=False,
        ) from error
    try:
        said = json.loads(content)["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError) as error:
        raise ProviderError("bad_response", "The model server's answer has no message.") from error
    if not isinstance(said, str):
        raise ProviderError("bad_response", "The model's message has no text.")
    return said


def _request_body(
    config: ProviderConfig, messages: list[ChatMessage], max_tokens: int, *, json_mode: bool
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": config.model,
        "messages": [wire_message(message) for message in messages],
        "stream": False,
        "temperature": 0,
        "max_tokens": max_tokens,
    }
    if json_mode:
        body["response_format"] = {"type": "json_object"}
    return body
