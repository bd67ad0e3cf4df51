"""Steps of model and tools until an answer in words, shared by chat turns and scheduled runs.

Every provider step is read in a task of its own while the lease is polled, and a request of
each budget is reserved (all or none) before every provider call.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
import time
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing, nullcontext, suppress
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import transaction

from agent.context import estimate_tokens
from agent.executor import ToolActivity, ToolExecutor, ToolOutcome
from agent.runner.db import db
from agent.runner.events import TurnState
from agent.runner.lease import Lease
from talorys.owner.models import OwnerSettings
from talorys.owner.services.usage import usage_reserve
from talorys.providers import provider_for
from talorys.providers.base import (
    ChatMessage,
    Provider,
    ProviderConfig,
    ProviderError,
    ProviderEvent,
    TextDelta,
    ToolCall,
    ToolChoice,
    Usage,
)

logger = logging.getLogger(__name__)

STEP_SEPARATOR = "\n\n"
# What a chat turn's model call spends (a scheduled run's spends its own budget as well).
CHAT_BUDGETS = ("ai",)

# Providers are kept across turns, per event loop and configuration: their HTTP client keeps
# connections (and TLS sessions) to the model server open, and making a new client costs more
# than everything else a turn does before its first request. A client belongs to the loop that
# made it, hence the key; entries of closed loops are dropped.
_providers: dict[int, tuple[asyncio.AbstractEventLoop, dict[ProviderConfig, Provider]]] = {}
_providers_lock = threading.Lock()


def shared_provider(config: ProviderConfig) -> Provider:
    loop = asyncio.get_running_loop()
    with _providers_lock:
        for key, (other, _) in list(_providers.items()):
            if other.is_closed():
                del _providers[key]
        _, providers = _providers.setdefault(id(loop), (loop, {}))
        if config not in providers:
            providers[config] = provider_for(config)
        return providers[config]


async def stream_step(
    provider: Provider,
    lease: Lease,
    *,
    messages: list[ChatMessage],
    tools: list[dict[str, Any]],
    max_tokens: int,
    tool_choice: ToolChoice,
) -> AsyncGenerator[ProviderEvent, None]:
    """One provider step, polling the lease even while the model is silent, within the step's
    deadline (TALORYS_MODEL_STEP_DEADLINE) whatever the server sends meanwhile.

    The provider is read in a task of its own so that a cancel noticed between chunks, or the
    deadline, can stop it, and so that its HTTP stream is always opened and closed in the same
    task.
    """
    # Events, then None at the end, or the exception the provider raised.
    queue: asyncio.Queue[ProviderEvent | Exception | None] = asyncio.Queue()
    events = provider.stream(
        messages=messages, tools=tools, max_tokens=max_tokens, tool_choice=tool_choice
    )
    reader = asyncio.create_task(_pump(events, queue))  # iterated, so opened, there only
    loop = asyncio.get_running_loop()
    deadline = loop.time() + settings.TALORYS_MODEL_STEP_DEADLINE
    try:
        while True:
            left = deadline - loop.time()
            if left <= 0:
                raise _step_timeout()
            try:
                item = await asyncio.wait_for(queue.get(), timeout=min(lease.wait_budget(), left))
            except TimeoutError:
                await lease.check()
                continue
            if item is None:
                return
            if isinstance(item, Exception):
                raise item
            yield item
            await lease.check()
    finally:
        reader.cancel()  # also closes the HTTP stream of a step past its deadline
        with suppress(asyncio.CancelledError):
            await reader


async def _pump(
    events: AsyncIterator[ProviderEvent], queue: asyncio.Queue[ProviderEvent | Exception | None]
) -> None:
    try:
        async for event in events:
            queue.put_nowait(event)
        queue.put_nowait(None)
    except Exception as error:
        queue.put_nowait(error)


def _step_timeout() -> ProviderError:
    # Silence has its own limit (the client's read timeout); this one holds for a server that
    # keeps the stream alive with comments or trickles text without ever finishing.
    return ProviderError(
        "timeout",
        f"The model server did not finish its answer within "
        f"{settings.TALORYS_MODEL_STEP_DEADLINE:g} s (TALORYS_MODEL_STEP_DEADLINE); "
        "it was cut there.",
    )


def _log_tool(outcome: ToolOutcome) -> None:
    """One line per tool call: its name and outcome (ok, error, refused, awaiting_approval) and,
    for a failure, its code. Arguments stay out: they are the owner's data."""
    status = outcome.activity["status"]
    code = "" if outcome.ok else str(outcome.result.get("error", {}).get("code", ""))
    logger.info(
        "Tool %s: %s%s",
        outcome.name,
        status,
        f" ({code})" if code else "",
        extra={"tool": outcome.name, "outcome": status, "error_code": code},
    )


def reserve_step(kinds: tuple[str, ...], owner_settings: OwnerSettings | None = None) -> None:
    """Reserve one request of each kind, all or none (``owner_settings``: read already). One
    kind is one conditional UPDATE, atomic by itself: no transaction around it (two round trips
    fewer on every step). No kinds (the demo): nothing to reserve."""
    with transaction.atomic() if len(kinds) > 1 else nullcontext():
        for kind in kinds:
            usage_reserve(kind=kind, owner_settings=owner_settings)


async def step_gate(lease: Lease, budgets: tuple[str, ...]) -> None:
    """What must hold before a model call, in one trip: no cancel accepted since the last poll,
    and a request of each of ``budgets`` reserved (BudgetExhausted otherwise)."""
    await lease.gate(functools.partial(reserve_step, budgets))


@dataclass
class _StepReply:
    """What one provider step said: its words (without separators) and its tool calls."""

    text: str = ""
    calls: list[ToolCall] = field(default_factory=list)
    reported_usage: bool = False

    def estimate(self, messages: list[ChatMessage], state: TurnState) -> None:
        """A step whose provider reported no usage: its tokens estimated from the characters
        sent and received, counted apart from the reported ones (TurnUsage)."""
        if self.reported_usage:
            return
        sent = (m.content + "".join(c.raw_arguments for c in m.tool_calls) for m in messages)
        state.estimated_input_tokens += sum(estimate_tokens(text) for text in sent)
        said = self.text + "".join(call.raw_arguments for call in self.calls)
        state.estimated_output_tokens += estimate_tokens(said)


async def model_loop(
    provider: Provider,
    lease: Lease,
    executor: ToolExecutor,
    *,
    max_steps: int,
    max_output_tokens: int,
    messages: list[ChatMessage],
    state: TurnState,
    budgets: tuple[str, ...] = CHAT_BUDGETS,
    first_step_gated: bool = False,
) -> AsyncGenerator[str | ToolActivity, None]:
    """Yields each text delta (a str) and each tool's activity as it comes; ``state`` keeps
    them too. A request of each of ``budgets`` is reserved before every provider call
    (``step_gate``; none when ``budgets`` is empty); ``first_step_gated``: the caller passed
    the first step's gate already."""
    max_reply_chars = settings.TALORYS_MAX_REPLY_CHARS
    for step in range(1, max_steps + 1):
        # Out of steps or tool budget: ask for an answer in words from what is known so far.
        final = step == max_steps or executor.budget_left <= 0
        if step > 1 or not first_step_gated:
            await step_gate(lease, budgets)
        state.requests += 1
        reply = _StepReply()
        began = time.perf_counter()
        # Asked each step: once the tool budget is spent the executor offers none.
        tools = executor.specs()
        if step == 1:
            state.phases.add("tools", began)
            state.phases.request_began = time.perf_counter()
        events = stream_step(
            provider,
            lease,
            messages=messages,
            tools=tools,
            max_tokens=max_output_tokens,
            tool_choice="none" if final else "auto",
        )
        async with aclosing(_step_deltas(events, reply, state, max_reply_chars)) as deltas:
            async for delta in deltas:
                yield delta
        reply.estimate(messages, state)
        if final or not reply.calls:
            return
        messages.append(ChatMessage(role="assistant", content=reply.text, tool_calls=reply.calls))
        async with aclosing(_tool_calls_run(lease, executor, reply.calls, messages, state)) as done:
            async for activity in done:
                yield activity


async def _step_deltas(
    events: AsyncGenerator[ProviderEvent, None],
    reply: _StepReply,
    state: TurnState,
    max_reply_chars: int,
) -> AsyncGenerator[str, None]:
    """The step's text deltas as shown (a step after another starts on a new paragraph);
    ``reply`` gathers its words and tool calls, ``state`` the reply and the tokens spent."""
    async with aclosing(events):
        async for event in events:
            if isinstance(event, TextDelta) and event.text:
                delta = event.text
                if not reply.text and state.text and not state.text[-1].isspace():
                    delta = STEP_SEPARATOR + delta
                room = max_reply_chars - len(state.text)
                if len(delta) > room:
                    # Kept up to the cap, then the turn ends: a model that does not stop (or a
                    # server that ignores max_tokens) must not fill the database.
                    state.text += delta[:room]
                    if room > 0:
                        yield delta[:room]
                    raise ProviderError(
                        "too_long",
                        f"The model's reply passed {max_reply_chars:,} characters "
                        "(TALORYS_MAX_REPLY_CHARS); it was cut there.",
                    )
                reply.text += event.text
                state.text += delta
                state.phases.first_text()
                yield delta
            elif isinstance(event, ToolCall):
                reply.calls.append(event)
            elif isinstance(event, Usage):
                reply.reported_usage = True
                state.input_tokens += event.input_tokens
                state.output_tokens += event.output_tokens


async def _tool_calls_run(
    lease: Lease,
    executor: ToolExecutor,
    calls: list[ToolCall],
    messages: list[ChatMessage],
    state: TurnState,
) -> AsyncGenerator[ToolActivity, None]:
    """Run a step's tool calls in order, each activity yielded as it ends and its result added
    to ``messages`` for the next step."""
    for call in calls:
        # Once a cancel is accepted no tool call starts (the poll above may be 0.5 s old).
        await lease.check(force=True)
        if executor.watched is not None:  # asked here, in async code (executor.py)
            executor.owner_watching = await executor.watched()
        outcome = await db(executor.execute)(call)
        _log_tool(outcome)
        state.tool_activity.append(outcome.activity)
        yield outcome.activity
        messages.append(
            ChatMessage(
                role="tool",
                content=outcome.content,
                tool_call_id=call.id,
                name=call.name,
            )
        )
