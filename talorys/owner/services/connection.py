"""Test connection: one tiny request to a model server, so the owner learns that the provider
settings work (or why not) before a chat depends on them.

The request goes through the provider the chat uses (``talorys.providers.provider_for``), with
short timeouts and no tools. It spends one request of the day's ordinary budget, reserved first
like every other provider call. Call it outside any transaction: it waits on the network.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass

from asgiref.sync import async_to_sync

from talorys.lib.errors import ValidationFailed
from talorys.lib.validation import HEADER_SAFE_TEXT, header_safe
from talorys.owner.selectors import model_endpoint, owner_settings_get
from talorys.owner.services.settings import owner_settings_check
from talorys.owner.services.usage import usage_record_tokens, usage_reserve
from talorys.providers import provider_for
from talorys.providers.base import ChatMessage, ProviderConfig, ProviderError, TextDelta, Usage
from talorys.providers.http_errors import bearer_headers

# Short: the owner is waiting at the settings page, and a chat's 120 s are for long replies.
CONNECT_TIMEOUT = 5.0
READ_TIMEOUT = 10.0
TOTAL_TIMEOUT = 15.0
REPLY_TOKENS = 32
# Kept to a few words: enough to show the server answered with this model.
PROMPT = "This is a connection test. Reply with the single word OK."
REPLY_SHOWN_CHARS = 200

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class ConnectionResult:
    ok: bool
    provider: str  # "demo" or "openai-compatible"
    base_url: str
    model: str
    reply: str = ""
    # On failure: the ProviderError's kind and code (PROVIDER_<KIND>) and its message.
    kind: str = ""
    code: str = ""
    message: str = ""
    elapsed_ms: int = 0


async def _ask(config: ProviderConfig) -> tuple[str, Usage]:
    provider = provider_for(config)
    text, usage = "", Usage()
    try:
        async with asyncio.timeout(TOTAL_TIMEOUT):
            stream = provider.stream(
                messages=[ChatMessage(role="user", content=PROMPT)],
                tools=[],
                max_tokens=REPLY_TOKENS,
                tool_choice="none",
            )
            async for event in stream:
                if isinstance(event, TextDelta):
                    text += event.text
                elif isinstance(event, Usage):
                    usage = event
    except TimeoutError as error:
        raise ProviderError(
            "timeout", f"The model server did not finish a short reply within {TOTAL_TIMEOUT:g} s."
        ) from error
    except ProviderError:
        raise
    except Exception as error:
        # Whatever else fails while the request is built or sent (httpx raises UnicodeEncodeError
        # for a header it cannot encode) is still a failed test for the owner, never a 500; the
        # log keeps the traceback.
        logger.exception("Test connection failed outside the provider's errors")
        raise ProviderError(
            "unreachable",
            f"The request to the model server could not be made ({type(error).__name__}); "
            "the server's log has the details.",
        ) from error
    finally:
        await provider.aclose()
    return text, usage


NOTHING_TO_TEST = ConnectionResult(
    ok=True,
    provider="demo",
    base_url="",
    model="",
    message="No model server is set, so the built-in demo model answers; nothing to test.",
)


def model_connection_test(
    *, base_url: str | None = None, model: str | None = None, api_key: str | None = None
) -> ConnectionResult:
    """Ask the model server one short question, with the given settings where sent (not saved)
    and the stored ones (over the environment's) for the rest.

    The stored key goes only to the server it belongs to (as ``model_endpoint`` decides): a test
    of another URL without a key is sent without one. A provider's failure is the result, not
    an error, and so is a stored key no header can carry (checked before the budget is spent);
    bad input (a URL that is not http(s), a URL without a model, a sent key that is not
    header-safe) is ValidationFailed, and a spent budget BudgetExhausted.
    """
    endpoint = model_endpoint(owner_settings=owner_settings_get())
    url = (base_url or "").strip() or endpoint.base_url
    name = (model or "").strip() or endpoint.model
    key = api_key or (endpoint.api_key if url == endpoint.base_url else "")
    owner_settings_check(model_base_url=url)
    if api_key and not header_safe(api_key):
        raise ValidationFailed(f"api_key {HEADER_SAFE_TEXT}.")
    if not url:
        return NOTHING_TO_TEST
    if not name:
        raise ValidationFailed("Name the model to test as well as the server's URL.")
    config = ProviderConfig(
        base_url=url,
        model=name,
        api_key=key,
        connect_timeout=CONNECT_TIMEOUT,
        read_timeout=READ_TIMEOUT,
    )
    started = time.monotonic()
    try:
        bearer_headers(key, server="model server")  # a stored bad key spends no request
        usage_reserve(kind="ai")
        reply, usage = async_to_sync(_ask)(config)
    except ProviderError as error:
        return _failed(config, error, started)
    usage_record_tokens(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens)
    return ConnectionResult(
        ok=True,
        provider="openai-compatible",
        base_url=url,
        model=name,
        reply=reply.strip()[:REPLY_SHOWN_CHARS],
        message=f"The model server at {url} answered with {name}.",
        elapsed_ms=round((time.monotonic() - started) * 1000),
    )


def _failed(config: ProviderConfig, error: ProviderError, started: float) -> ConnectionResult:
    return ConnectionResult(
        ok=False,
        provider="openai-compatible",
        base_url=config.base_url,
        model=config.model,
        kind=error.kind,
        code=error.code,
        message=error.message,
        elapsed_ms=round((time.monotonic() - started) * 1000),
    )
