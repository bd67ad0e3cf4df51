"""The chat turn, shared by both transports (WebSocket and SSE).

``begin_turn`` claims the conversation and saves the owner's message, so a refusal (bad input,
unknown conversation, CONFLICT) is an AppError raised before any event; ``stream_turn`` then
yields the turn's events, where failures become an ``error`` event and a saved error reply.
``run_turn`` is the two in one generator. Events, in order: ``title`` (new conversation only),
``start``, ``text`` and ``tool`` as they come, ``error`` (on failure), ``done``.

The turn polls its lease about twice a second (cancel from any process, see agent/services.py).
A consumer that stops iterating (``aclose()``, task cancellation, client disconnect) ends the
turn ``cancelled``; tool effects already done stay. ORM work runs in ``sync_to_async`` calls,
each its own short transaction at most: no transaction is ever open across a provider call.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import aclosing, suppress
from dataclasses import dataclass, field
from typing import Any, Literal, ParamSpec, TypeVar
from zoneinfo import ZoneInfo

from asgiref.sync import async_to_sync, sync_to_async
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from agent import context, prompt, selectors, services
from agent.executor import ToolExecutor
from agent.models import Conversation, Message
from memory import selectors as memory_selectors
from talorys.lib.errors import AppError, BudgetExhausted, database_unavailable
from talorys.lib.tools import ToolContext
from talorys.providers import provider_for
from talorys.providers.base import (
    ChatMessage,
    Provider,
    ProviderConfig,
    ProviderError,
    ProviderEvent,
    TextDelta,
    ToolCall,
    Usage,
)
from talorys.workspace import services as core_services
from talorys.workspace.selectors import provider_config

logger = logging.getLogger(__name__)

Event = dict[str, Any]

# How often a streaming turn looks at its row for a cancel request (a cheap read; every
# LEASE_SECONDS / 3 it is the lease renewal instead).
POLL_SECONDS = 0.5
RENEW_SECONDS = services.LEASE_SECONDS / 3
# Enough for the notes (at most selectors.outcome_notes_outside's limit) to settle.
OUTCOME_ROUNDS = 4
STEP_SEPARATOR = "\n\n"


class TurnCancelled(Exception):
    """The owner asked to stop, or the turn lost its lease."""


P = ParamSpec("P")
R = TypeVar("R")


def _db(fn: Callable[P, R]) -> Callable[P, Awaitable[R]]:
    """``sync_to_async(fn)`` that gives the thread's database connection back when ``fn`` ends.

    A turn spends seconds streaming between short trips to the database; a connection kept
    across them made each running turn hold one, and 120 concurrent turns ran PostgreSQL out of
    connections. Closing hands a pooled connection back to the pool (DATABASES' "pool" option,
    talorys/settings.py). Inside an atomic block (a test's transaction) it must stay open.
    """

    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        finally:
            if not connection.in_atomic_block:
                connection.close()

    return sync_to_async(call)


@dataclass
class TurnInputs:
    """What the turn read from the database before its first provider call."""

    provider: ProviderConfig
    local_now: dt.datetime
    time_zone: str
    memories: list[str]
    summary: str
    history: list[context.HistoryEntry]
    max_steps: int
    max_tool_calls: int
    max_output_tokens: int
    max_context_tokens: int
    # Chat turns only: the history that fits, and the outcomes of proposals whose reply it left out.
    window: context.Window | None = None
    outcomes: list[str] = field(default_factory=list)

    def system_prompt(self, *, summary: str = "", outcomes: list[str] | None = None) -> str:
        return prompt.system_prompt(
            now=self.local_now,
            time_zone=self.time_zone,
            memories=self.memories,
            summary=summary,
            outcomes=outcomes,
        )


@dataclass
class TurnState:
    text: str = ""
    tool_activity: list[dict[str, Any]] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    requests: int = 0  # provider calls made (each reserved a request of every budget)
    status: str = Message.Status.STREAMING
    error_code: str = ""
    error_message: str = ""

    def fail(self, code: str, message: str) -> None:
        self.status = Message.Status.ERROR
        self.error_code = code
        self.error_message = message


def _inputs(
    *, text: str, summary: str = "", history: list[context.HistoryEntry] | None = None
) -> TurnInputs:
    owner = core_services.owner_settings_get()
    return TurnInputs(
        provider=provider_config(owner),
        local_now=timezone.now().astimezone(ZoneInfo(owner.time_zone)),
        time_zone=owner.time_zone,
        memories=memory_selectors.memory_select_for_turn(text=text),
        summary=summary,
        history=history or [],
        max_steps=max(1, owner.max_steps_per_turn),
        max_tool_calls=owner.max_tool_calls_per_turn,
        max_output_tokens=owner.max_output_tokens,
        max_context_tokens=owner.max_context_tokens,
    )


def _load_inputs(start: services.TurnStart) -> TurnInputs:
    conversation = Conversation.objects.only("summary", "summary_upto").get(
        pk=start.conversation_id
    )
    inputs = _inputs(
        text=start.text,
        summary=conversation.summary,
        history=selectors.conversation_history(
            conversation_id=start.conversation_id, after_id=conversation.summary_upto
        ),
    )
    # Chosen here, in the same trip to the database thread: the window is a pure function of
    # what was just read, and the outcomes need to know which replies it keeps.
    # Measured without the summary: HISTORY_RESERVE_TOKENS keeps room for it. The outcome notes
    # go in the system prompt, so they are measured: a smaller window may leave out more
    # replies, hence more notes, so the choice is repeated until the notes stop changing (once,
    # when the conversation has no proposals out of the window).
    outcomes: list[str] = []
    for _ in range(OUTCOME_ROUNDS):
        budget = context.history_budget(
            max_context_tokens=inputs.max_context_tokens,
            system_prompt=inputs.system_prompt(outcomes=outcomes),
        )
        inputs.window = context.select_window(inputs.history, budget_tokens=budget)
        inputs.outcomes = selectors.outcome_notes_outside(
            conversation_id=start.conversation_id,
            shown_message_ids={e.id for e in inputs.window.kept if e.role == "assistant"},
        )
        if inputs.outcomes == outcomes:
            break
        outcomes = inputs.outcomes
    return inputs


def _save_outcome(start: services.TurnStart, state: TurnState) -> str:
    """Save the reply and give the lease back; the status it was saved with."""
    content = state.text
    if state.status == Message.Status.ERROR and not content.strip():
        content = state.error_message
    return services.turn_finish(
        conversation_id=start.conversation_id,
        turn_id=start.turn_id,
        message_id=start.assistant_message_id,
        content=content,
        tool_activity=state.tool_activity,
        status=state.status,
        error_code=state.error_code,
    )


async def _finish(start: services.TurnStart, state: TurnState) -> None:
    """Save the outcome, whatever happens: a save that fails (a text the database refuses, no
    connection to be had) is followed by a saved error reply, so the conversation is never left
    with a reply streaming forever and a lease that answers 409 until it expires."""
    try:
        state.status = await _db(_save_outcome)(start, state)
    except Exception as error:
        logger.exception("Conversation %s: could not save the reply", start.conversation_id)
        busy = database_unavailable(error)
        if busy is not None:
            state.fail(busy.code, busy.message)
        else:
            state.fail("INTERNAL", "The reply could not be saved. Try again.")
        try:
            # Only the error: what streamed may be what the database refused.
            await _db(services.turn_finish)(
                conversation_id=start.conversation_id,
                turn_id=start.turn_id,
                message_id=start.assistant_message_id,
                content=state.error_message,
                tool_activity=[],
                status=Message.Status.ERROR,
                error_code=state.error_code,
            )
        except Exception:
            logger.exception("Conversation %s: could not save the error", start.conversation_id)
            # The lease at least: the next turn closes the reply left streaming (turn_begin).
            with suppress(Exception):
                await _db(services.turn_release)(
                    conversation_id=start.conversation_id, turn_id=start.turn_id
                )
    if state.input_tokens or state.output_tokens:
        try:
            await _db(core_services.usage_record_tokens)(
                input_tokens=state.input_tokens, output_tokens=state.output_tokens
            )
        except Exception:  # the reply is saved; a lost count must not turn it into an error
            logger.exception("Conversation %s: tokens not counted", start.conversation_id)


class _Lease:
    """The turn's view of its row: polls for cancel, renews the lease."""

    def __init__(self, start: services.TurnStart) -> None:
        self.start = start
        self.polled_at = self.renewed_at = time.monotonic()

    def wait_budget(self) -> float:
        return max(0.05, POLL_SECONDS - (time.monotonic() - self.polled_at))

    async def check(self, *, force: bool = False) -> None:
        """Raise TurnCancelled when a cancel was asked for or the lease is lost. Rate-limited to
        one read per POLL_SECONDS, unless ``force``: before something that must not happen after
        an accepted cancel (a tool call, a model step)."""
        now = time.monotonic()
        if not force and now - self.polled_at < POLL_SECONDS:
            return
        renew = now - self.renewed_at >= RENEW_SECONDS
        alive = await _db(services.turn_heartbeat)(
            conversation_id=self.start.conversation_id, turn_id=self.start.turn_id, renew=renew
        )
        self.polled_at = time.monotonic()
        if renew:
            self.renewed_at = self.polled_at
        if not alive:
            raise TurnCancelled


class _NoLease:
    """A scheduled run has no conversation to hold and nobody to cancel it."""

    def wait_budget(self) -> float:
        return POLL_SECONDS

    async def check(self, *, force: bool = False) -> None:
        return None


_END = object()

# Providers are kept across turns, per event loop and configuration: their HTTP client keeps
# connections (and TLS sessions) to the model server open, and making a new client costs more
# than everything else a turn does before its first request. A client belongs to the loop that
# made it, hence the key; entries of closed loops are dropped.
_providers: dict[int, tuple[asyncio.AbstractEventLoop, dict[ProviderConfig, Provider]]] = {}
_providers_lock = threading.Lock()


def _shared_provider(config: ProviderConfig) -> Provider:
    loop = asyncio.get_running_loop()
    with _providers_lock:
        for key, (other, _) in list(_providers.items()):
            if other.is_closed():
                del _providers[key]
        _, providers = _providers.setdefault(id(loop), (loop, {}))
        if config not in providers:
            providers[config] = provider_for(config)
        return providers[config]


async def _stream(
    provider: Provider,
    lease: _Lease,
    *,
    messages: list[ChatMessage],
    tools: list[dict[str, Any]],
    max_tokens: int,
    tool_choice: Literal["auto", "none"],
) -> AsyncIterator[ProviderEvent]:
    """One provider step, polling the lease even while the model is silent.

    The provider is read in a task of its own so that a cancel noticed between chunks can stop
    it, and so that its HTTP stream is always opened and closed in the same task.
    """
    queue: asyncio.Queue[Any] = asyncio.Queue()

    async def pump() -> None:
        try:
            async for event in provider.stream(
                messages=messages, tools=tools, max_tokens=max_tokens, tool_choice=tool_choice
            ):
                queue.put_nowait(event)
            queue.put_nowait(_END)
        except Exception as error:
            queue.put_nowait(error)

    reader = asyncio.create_task(pump())
    try:
        while True:
            try:
                item = await asyncio.wait_for(queue.get(), timeout=lease.wait_budget())
            except TimeoutError:
                await lease.check()
                continue
            if item is _END:
                return
            if isinstance(item, Exception):
                raise item
            yield item
            await lease.check()
    finally:
        reader.cancel()
        with suppress(asyncio.CancelledError):
            await reader


async def _summarize(
    provider: Provider,
    lease: _Lease,
    start: services.TurnStart,
    inputs: TurnInputs,
    window: context.Window,
) -> str:
    """Fold the overflow into the running summary; on failure keep the old one and go on."""
    try:
        await _db(core_services.usage_reserve)(kind="ai")
        parts: list[str] = []
        async with aclosing(
            _stream(
                provider,
                lease,
                messages=context.summary_messages(
                    prior_summary=inputs.summary, overflow=window.overflow
                ),
                tools=[],
                max_tokens=context.SUMMARY_MAX_TOKENS,
                tool_choice="none",
            )
        ) as events:
            async for event in events:
                if isinstance(event, TextDelta):
                    parts.append(event.text)
        summary = context.clean_summary("".join(parts))
        if not summary:
            raise ProviderError("bad_response", "The summary came back empty.")
    except (ProviderError, BudgetExhausted) as error:
        logger.warning(
            "Conversation %s: summary failed, continuing without it: %s",
            start.conversation_id,
            error,
        )
        return inputs.summary
    await _db(services.conversation_summary_store)(
        conversation_id=start.conversation_id,
        summary=summary,
        summary_upto=window.overflow[-1].id,
    )
    return summary


async def _context(
    provider: Provider, lease: _Lease, start: services.TurnStart, inputs: TurnInputs
) -> list[ChatMessage]:
    window = inputs.window
    assert window is not None  # set by _load_inputs
    summary = inputs.summary
    # The day's remaining budget is read only when enough overflowed to want a summary.
    if context.overflow_needs_summary(len(window.overflow)) and context.budget_allows_summary(
        await _db(core_services.usage_remaining)(kind="ai")
    ):
        summary = await _summarize(provider, lease, start, inputs, window)
    system = inputs.system_prompt(summary=summary, outcomes=inputs.outcomes)
    return [ChatMessage(role="system", content=system), *context.window_messages(window)]


def _event(kind: str, start: services.TurnStart, **fields: Any) -> Event:
    return {"type": kind, "conversation_id": start.conversation_id, **fields}


def _reserve(kinds: tuple[str, ...]) -> None:
    """Reserve one request of each kind, all or none."""
    with transaction.atomic():
        for kind in kinds:
            core_services.usage_reserve(kind=kind)


async def _model_loop(
    provider: Provider,
    lease: _Lease | _NoLease,
    executor: ToolExecutor,
    *,
    max_steps: int,
    max_output_tokens: int,
    messages: list[ChatMessage],
    state: TurnState,
    budgets: tuple[str, ...] = ("ai",),
) -> AsyncIterator[tuple[Literal["text", "tool"], Any]]:
    """Steps of model and tools until an answer in words. Yields ("text", delta) and
    ("tool", activity); a request of each of ``budgets`` is reserved before every provider call."""
    max_reply_chars = settings.TALORYS_MAX_REPLY_CHARS
    for step in range(1, max_steps + 1):
        # Out of steps or tool budget: ask for an answer in words from what is known so far.
        final = step == max_steps or executor.budget_left <= 0
        # A cancel accepted since the last poll stops the turn before another model call.
        await lease.check(force=True)
        await _db(_reserve)(budgets)
        state.requests += 1
        step_text = ""
        calls: list[ToolCall] = []
        async with aclosing(
            _stream(
                provider,
                lease,
                messages=messages,
                # Asked each step: once the tool budget is spent the executor offers none.
                tools=executor.specs(),
                max_tokens=max_output_tokens,
                tool_choice="none" if final else "auto",
            )
        ) as events:
            async for event in events:
                if isinstance(event, TextDelta) and event.text:
                    delta = event.text
                    if not step_text and state.text and not state.text[-1].isspace():
                        delta = STEP_SEPARATOR + delta
                    room = max_reply_chars - len(state.text)
                    if len(delta) > room:
                        # Kept up to the cap, then the turn ends: a model that does not stop (or
                        # a server that ignores max_tokens) must not fill the database.
                        state.text += delta[:room]
                        if room > 0:
                            yield "text", delta[:room]
                        raise ProviderError(
                            "too_long",
                            f"The model's reply passed {max_reply_chars:,} characters "
                            "(TALORYS_MAX_REPLY_CHARS); it was cut there.",
                        )
                    step_text += event.text
                    state.text += delta
                    yield "text", delta
                elif isinstance(event, ToolCall):
                    calls.append(event)
                elif isinstance(event, Usage):
                    state.input_tokens += event.input_tokens
                    state.output_tokens += event.output_tokens
        if final or not calls:
            return
        messages.append(ChatMessage(role="assistant", content=step_text, tool_calls=calls))
        for call in calls:
            # Once a cancel is accepted no tool call starts (the poll above may be 0.5 s old).
            await lease.check(force=True)
            outcome = await _db(executor.execute)(call)
            state.tool_activity.append(outcome.activity)
            yield "tool", outcome.activity
            messages.append(
                ChatMessage(
                    role="tool",
                    content=outcome.content,
                    tool_call_id=call.id,
                    name=call.name,
                )
            )


async def begin_turn(
    *, conversation_id: int | None = None, text: str = "", retry: bool = False
) -> services.TurnStart:
    """Claim the conversation and save the owner's message; raises AppError (VALIDATION,
    NOT_FOUND, CONFLICT) before anything is kept. Follow it with ``stream_turn``."""
    # Not _db: the request's response phase (its session save) reuses this connection, where a
    # pool found empty would be a 500; stream_turn's first trip, on the same thread, gives it back.
    return await sync_to_async(services.turn_begin)(
        conversation_id=conversation_id, text=text, retry=retry
    )


async def stream_turn(start: services.TurnStart) -> AsyncIterator[Event]:
    """The events of a claimed turn. Model, budget and tool failures are ``error`` events, and
    the reply is saved whatever happens, then the lease given back.

    Iterate it promptly after ``begin_turn``: only a started stream gives the lease back when
    it ends (a never-started one leaves the lease to expire).
    """
    state = TurnState()
    lease = _Lease(start)
    try:
        if start.title is not None:
            yield _event("title", start, title=start.title)
        yield _event(
            "start",
            start,
            message_id=start.assistant_message_id,
            user_message_id=start.user_message_id,
        )
        inputs = await _db(_load_inputs)(start)
        provider = _shared_provider(inputs.provider)
        messages = await _context(provider, lease, start, inputs)
        executor = ToolExecutor(
            ctx=ToolContext(
                mode="chat",
                conversation_id=start.conversation_id,
                message_id=start.assistant_message_id,
                source="chat",
            ),
            max_tool_calls=inputs.max_tool_calls,
        )
        steps = _model_loop(
            provider,
            lease,
            executor,
            max_steps=inputs.max_steps,
            max_output_tokens=inputs.max_output_tokens,
            messages=messages,
            state=state,
        )
        async with aclosing(steps):
            async for kind, value in steps:
                field = "delta" if kind == "text" else "activity"
                yield _event(kind, start, message_id=start.assistant_message_id, **{field: value})
        # Saved complete unless a cancel was accepted meanwhile: turn_finish decides that under
        # the conversation's row lock, so a cancel answered True always ends the reply cancelled.
        state.status = Message.Status.COMPLETE
    except TurnCancelled:
        state.status = Message.Status.CANCELLED
    except (ProviderError, AppError) as error:
        # BudgetExhausted is an AppError: BUDGET_EXHAUSTED, saved like any other failure.
        state.fail(error.code, error.message)
    except Exception as error:
        busy = database_unavailable(error)
        if busy is not None:  # no database connection to be had: load, not a bug
            state.fail(busy.code, busy.message)
        else:
            logger.exception("Conversation %s: the turn failed", start.conversation_id)
            state.fail("INTERNAL", "Something went wrong while answering. Try again.")
    finally:
        # Also reached when the consumer stops early (aclose, cancellation, disconnect): what
        # streamed so far is kept, marked cancelled.
        if state.status == Message.Status.STREAMING:
            state.status = Message.Status.CANCELLED
        await _finish(start, state)
    if state.status == Message.Status.ERROR:
        yield _event("error", start, code=state.error_code, message=state.error_message)
    yield _event("done", start, message_id=start.assistant_message_id, status=str(state.status))


async def run_turn(
    *, conversation_id: int | None = None, text: str = "", retry: bool = False
) -> AsyncIterator[Event]:
    """``begin_turn`` then ``stream_turn``: a refusal raises from the first ``anext()``."""
    start = await begin_turn(conversation_id=conversation_id, text=text, retry=retry)
    async with aclosing(stream_turn(start)) as events:
        async for event in events:
            yield event


# --- scheduled runs (automations) --------------------------------------------------------------


@dataclass
class ScheduledReply:
    text: str
    tool_activity: list[dict[str, Any]]


async def arun_scheduled_prompt(
    *, prompt_text: str, source: str, usage: dict[str, int] | None = None
) -> ScheduledReply:
    """An automation's stored prompt, run by the model in scheduled mode: read tools plus
    notify_owner only (the executor enforces it), steps and output capped, and both the
    scheduled and the ordinary AI budget reserved before every provider call.

    Raises ProviderError or BudgetExhausted; the automation records them on its run receipt.
    ``usage``, when given, is filled with what the run spent (requests, input_tokens,
    output_tokens) even when it raises: the receipt records it either way.
    """
    inputs = await _db(_inputs)(text=prompt_text)
    executor = ToolExecutor(
        ctx=ToolContext(mode="scheduled", source=source), max_tool_calls=inputs.max_tool_calls
    )
    messages = [
        ChatMessage(role="system", content=inputs.system_prompt() + "\n\n" + prompt.SCHEDULED_NOTE),
        ChatMessage(role="user", content=prompt_text),
    ]
    state = TurnState()
    # A worker's event loop lives for one run: its provider is made and closed here.
    provider = provider_for(inputs.provider)
    try:
        steps = _model_loop(
            provider,
            _NoLease(),
            executor,
            max_steps=inputs.max_steps,
            max_output_tokens=inputs.max_output_tokens,
            messages=messages,
            state=state,
            budgets=("scheduled_ai", "ai"),
        )
        async with aclosing(steps):
            async for _ in steps:
                pass
    finally:
        await provider.aclose()
        if usage is not None:
            usage.update(
                requests=state.requests,
                input_tokens=state.input_tokens,
                output_tokens=state.output_tokens,
            )
        if state.input_tokens or state.output_tokens:
            await _db(core_services.usage_record_tokens)(
                input_tokens=state.input_tokens, output_tokens=state.output_tokens
            )
    return ScheduledReply(text=state.text.strip(), tool_activity=state.tool_activity)


def run_scheduled_prompt(*, prompt: str, source: str, usage: dict[str, int] | None = None) -> str:
    """Synchronous entry for celery tasks: the reply's text (``usage`` as in the async one)."""
    return async_to_sync(arun_scheduled_prompt)(prompt_text=prompt, source=source, usage=usage).text
