"""The models an OpenAI-compatible server lists (``GET {base_url}/models``), by their ids.

One short synchronous request with ``httpx``, no retries: a failure is a ``ProviderError`` as
every other request to the server (http_errors.py). The caller keeps the answer for a while
(talorys.owner.selectors.model_choices); the ids are held to what a conversation can store.
"""

from __future__ import annotations

import json
import time

import httpx

from talorys.providers.base import ProviderConfig, ProviderError, without_nul
from talorys.providers.http_errors import bearer_headers, read_answer, transport_error
from talorys.providers.openai_wire import MAX_EVENT_BYTES
from talorys.providers.structured import _tls

# A model id longer than this is not one a conversation can store (agent.models.Conversation).
MODEL_ID_MAX = 200
# More than any real server lists (OpenRouter lists about 300); the rest are left out.
MODELS_MAX = 1_000
TIMEOUT_SECONDS = 5.0


def listed_models(
    config: ProviderConfig,
    *,
    timeout: float = TIMEOUT_SECONDS,
    transport: httpx.BaseTransport | None = None,
) -> list[str]:
    """The ids the server lists, in its order, without repeats. Raises ProviderError."""
    url = config.base_url.rstrip("/") + "/models"
    headers = bearer_headers(config.api_key, server="model server")
    try:
        with (
            httpx.Client(timeout=timeout, transport=transport, verify=_tls()) as client,
            client.stream("GET", url, headers=headers) as response,
        ):
            content = read_answer(
                response,
                server="model server",
                max_bytes=MAX_EVENT_BYTES,
                deadline=time.monotonic() + timeout,
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
    return model_ids(content)


def model_ids(content: bytes) -> list[str]:
    """The ids in a model list's body (``{"data": [{"id": ...}, ...]}``); ProviderError when the
    body is not one. Ids that are not text, empty or too long are left out."""
    try:
        items = json.loads(content)["data"]
    except (ValueError, KeyError, TypeError) as error:
        raise ProviderError(
            "bad_response", "The model server's answer has no model list."
        ) from error
    if not isinstance(items, list):
        raise ProviderError("bad_response", "The model server's model list is not a list.")
    ids: dict[str, None] = {}
    for item in items:
        model = item.get("id") if isinstance(item, dict) else None
        if isinstance(model, str) and 0 < len(model.strip()) <= MODEL_ID_MAX:
            ids[without_nul(model.strip())] = None
        if len(ids) >= MODELS_MAX:
            break
    return list(ids)
