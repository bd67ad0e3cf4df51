"""A chat turn, from the claim to the saved reply: ``begin_turn``, ``stream_turn``, ``run_turn``."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import aclosing, suppress
from typing import Any

from asgiref.sync import sync_to_async

from agent import services, turn_saves
from agent.activity import shown_activity
from agent.executor import ToolActivity, ToolExecutor
from agent.models import Message, Origin
from agent.rerun import Rerun
from agent.runner import reindex
from agent.runner.db import db
from agent.runner.events import TextEvent, ToolEvent, TurnEvent, TurnState, error_event
from agent.runner.inputs import TurnInputs, read_chat_inputs
from agent.runner.lease import TurnCancelled, TurnLease
from agent.runner.messages import turn_messages
from agent.runner.model_loop import CHAT_BUDGETS, model_loop, shared_provider
from agent.runner.phases import claimed, turn_phases
from agent.runner.title import generated_title
from memory import embeddings
from talorys.lib.errors import AppError, InternalError, classify_failure, database_unavailable
from talorys.lib.logs import with_turn_id
from talorys.lib.markdown import render_markdown_async
from talorys.lib.tools import ToolContext
from talorys.owner.services.usage import usage_record_tokens
from talorys.providers.base import ProviderError

logger = logging.getLogger(__name__)

# How long the reply's save waits between attempts while the database cannot be reached (a
# dropped connection, a restart): about 30 s in all, then the save's error is the outcome.
SAVE_RETRY_WAITS = (0.5, 1.0, 2.0, 4.0, 8.0, 15.0)


def _save_outcome(
    start: services.TurnStart, state: TurnState, *, error_only: bool = False
) -> Message.Status:
    """Save the reply and give the lease back; the status it was saved with. A failure's reason
    goes in ``error_message``: ``content`` is only ever what the model said. ``error_only``
    keeps the text saved while the reply streamed (TurnLease.keep) and drops the activity."""
    return turn_saves.turn_finish(
        conversation_id=start.conversation_id,
        turn_id=start.turn_id,
        message_id=start.assistant_message_id,
        content=None if error_only else state.text,
        tool_activity=[] if error_only else state.tool_activity,
        status=state.status,
        error_code=state.error_code,
        error_message=state.error_message,
    )


async def _save_when_possible(start: services.TurnStart, state: TurnState) -> Message.Status:
    """``_save_outcome``, tried again while the database cannot be reached: the connection a
    trip took may be one the server dropped (each is discarded once it fails), or the server
    may be restarting. What streamed is saved whole once it answers again."""
    for wait in SAVE_RETRY_WAITS:
        try:
            return await db(_save_outcome)(start, state)
        except Exception as error:
            if database_unavailable(error) is None:
                raise
            logger.warning(
                "Conversation %s: reply not saved yet (%s)", start.conversation_id, error
            )
            await asyncio.sleep(wait)
    return await db(_save_outcome)(start, state)


async def _finish(start: services.TurnStart, state: TurnState) -> None:
    """Save the outcome, whatever happens: a save that fails (a text the database refuses, no
    connection to be had for half a minute) is followed by a saved error reply, so the
    conversation is never left with a reply streaming forever and a lease that answers 409 until
    it expires."""
    try:
        state.status = await _save_when_possible(start, state)
    except Exception as error:
        logger.exception("Conversation %s: could not save the reply", start.conversation_id)
        failure = classify_failure(error, message="The reply could not be saved. Try again.")
        state.fail(failure.code, failure.message)
        state.text = ""  # not saved, so not shown either (the done event's html)
        try:
            # Only the error: what streamed may be what the database refused.
            await db(_save_outcome)(start, state, error_only=True)
        except Exception:
            logger.exception("Conversation %s: could not save the error", start.conversation_id)
            # The lease at least: the next turn closes the reply left streaming (turn_begin).
            with suppress(Exception):
                await db(services.turn_release)(
                    conversation_id=start.conversation_id, turn_id=start.turn_id
                )
    if state.input_tokens or state.output_tokens:
        try:
            await db(usage_record_tokens)(
                input_tokens=state.input_tokens, output_tokens=state.output_tokens
            )
        except Exception:  # the reply is saved; a lost count must not turn it into an error
            logger.exception("Conversation %s: tokens not counted", start.conversation_id)


async def begin_turn(
    *,
    conversation_id: int | None = None,
    text: str = "",
    rerun: Rerun | None = None,
    message_id: int | None = None,
    origin: Origin = Origin.LIVE,
    model: str | None = None,
    attachments: list[int] | None = None,
) -> services.TurnStart:
    """Claim the conversation and save the owner's message; raises AppError (VALIDATION,
    NOT_FOUND, CONFLICT) before anything is kept. Follow it with ``stream_turn``. ``rerun``,
    ``origin`` and ``model`` (a new conversation's) are services.turn_begin's."""
    # Not db(): the request's response phase (its session save) reuses this connection on the
    # request's thread, where a pool found empty would be a 500; the chat API's stream gives it
    # back as its first step (give_back_request_connection).
    began = time.perf_counter()
    # The question's vector, from the embedder process, beside the claim and the turn's reads:
    # recall then finds it made (or on its way) instead of asking for it after them
    # (memory/embeddings.py). A retry's or an edit's text is known after the claim.
    embeddings.query_prefetch(text)
    start = await sync_to_async(services.turn_begin)(
        conversation_id=conversation_id,
        text=text,
        rerun=rerun,
        message_id=message_id,
        origin=origin,
        model=model,
        attachments=attachments,
    )
    claimed(start, began)
    embeddings.query_prefetch(start.text)
    return start


def stream_turn(
    start: services.TurnStart, watched: Callable[[], Awaitable[bool]] | None = None
) -> AsyncGenerator[TurnEvent, None]:
    """The events of a claimed turn. Model, budget and tool failures are ``error`` events, and
    the reply is saved whatever happens, then the lease given back. Every log line of the turn
    carries its ``turn_id`` (talorys/lib/logs.py). ``watched``: whether a page of the owner's
    follows it now (agent/executor.py), for the owner's own turns (agent/live/run.py).

    Iterate it promptly after ``begin_turn``: only a started stream gives the lease back when
    it ends (a never-started one leaves the lease to expire).
    """
    return with_turn_id(start.turn_id, _turn_events(start, watched))


async def _turn_events(
    start: services.TurnStart, watched: Callable[[], Awaitable[bool]] | None
) -> AsyncGenerator[TurnEvent, None]:
    state = TurnState(phases=turn_phases(start), watched=watched)
    started = time.monotonic()
    inputs: TurnInputs | None = None
    lease = TurnLease(start, text=lambda: state.text)
    conversation_id = start.conversation_id
    logger.info(
        "Turn started: conversation %s, reply %s", conversation_id, start.assistant_message_id
    )
    try:
        async with lease.kept():
            for event in _opening_events(start):
                yield event
            # The first model step's gate (a cancel, the budget) is passed with the reads.
            read = await state.phases.waited("reads", read_chat_inputs(start, lease, state.phases))
            inputs = read  # for the title, after the reply
            async with aclosing(_reply_events(start, state, lease, read)) as replies:
                async for event in replies:
                    yield event
        # Saved complete unless a cancel was accepted meanwhile: turn_finish decides that under
        # the conversation's row lock, so a cancel answered True always ends the reply cancelled.
        state.status = Message.Status.COMPLETE
    except TurnCancelled:
        state.status = Message.Status.CANCELLED
    except Exception as error:
        _record_failure(state, error, conversation_id)
    finally:
        # Also reached when the consumer stops early (aclose, cancellation, shutdown): what
        # streamed so far is kept, marked cancelled.
        if state.status == Message.Status.STREAMING:
            state.status = Message.Status.CANCELLED
        await _finish(start, state)
        _log_turn_end(state, started, conversation_id)
    async with aclosing(_closing_events(start, state, inputs)) as closing:
        async for event in closing:
            yield event


def _opening_events(start: services.TurnStart) -> list[TurnEvent]:
    """The title (when the owner's message gave the conversation one), then ``start``."""
    events: list[TurnEvent] = []
    if start.title is not None:
        events.append(
            {"type": "title", "conversation_id": start.conversation_id, "title": start.title}
        )
    events.append(
        {
            "type": "start",
            "conversation_id": start.conversation_id,
            "message_id": start.assistant_message_id,
            "user_message_id": start.user_message_id,
            "replaced_message_ids": list(start.replaced_message_ids),
        }
    )
    return events


async def _reply_events(
    start: services.TurnStart, state: TurnState, lease: TurnLease, read: TurnInputs
) -> AsyncGenerator[TurnEvent, None]:
    """The model's steps as ``text`` and ``tool`` events; ``state`` gathers the reply."""
    provider = shared_provider(read.provider)
    messages = await state.phases.waited("prompt", turn_messages(provider, lease, start, read))
    executor = ToolExecutor(
        ctx=ToolContext(
            mode=start.tool_mode,
            conversation_id=start.conversation_id,
            message_id=start.assistant_message_id,
            source="chat",
            proposer=start.proposer,
        ),
        max_tool_calls=read.max_tool_calls,
        watched=state.watched,
    )
    steps = model_loop(
        provider,
        lease,
        executor,
        max_steps=read.max_steps,
        max_output_tokens=read.max_output_tokens,
        messages=messages,
        state=state,
        # The demo asks no model server: trying it never spends the day's chat budget the
        # owner's model will need (inputs.py does not reserve its first step either).
        budgets=() if provider.is_demo else CHAT_BUDGETS,
        first_step_gated=True,
    )
    async with aclosing(steps):
        async for said in steps:
            yield _step_event(start, said)


def _step_event(start: services.TurnStart, said: str | ToolActivity) -> TextEvent | ToolEvent:
    """A model step's output: a text delta, or a tool call's shown activity."""
    if isinstance(said, str):
        return {
            "type": "text",
            "conversation_id": start.conversation_id,
            "message_id": start.assistant_message_id,
            "delta": said,
        }
    return {
        "type": "tool",
        "conversation_id": start.conversation_id,
        "message_id": start.assistant_message_id,
        "activity": shown_activity(said),
    }


def _record_failure(state: TurnState, error: Exception, conversation_id: int) -> None:
    """Mark the turn failed with the error's code; called in the ``except`` that caught it."""
    if isinstance(error, AppError):
        # A ProviderError or BudgetExhausted (PROVIDER_*, BUDGET_EXHAUSTED) is saved like any.
        if isinstance(error, ProviderError):
            logger.warning(
                "Provider error (%s): %s", error.kind, error.message, extra={"kind": error.kind}
            )
        state.fail(error.code, error.message)
        return
    failure = classify_failure(error, message="Something went wrong while answering. Try again.")
    if isinstance(failure, InternalError):  # no database connection to be had is load, not a bug
        logger.exception("Conversation %s: the turn failed", conversation_id)
    state.fail(failure.code, failure.message)


def _log_turn_end(state: TurnState, started: float, conversation_id: int) -> None:
    elapsed = time.monotonic() - started
    logger.info(
        "Turn ended: conversation %s, %s%s in %.2f s (%d model requests, %d tool calls)",
        conversation_id,
        state.status,
        f" {state.error_code}" if state.error_code else "",
        elapsed,
        state.requests,
        len(state.tool_activity),
        extra={
            "status": str(state.status),
            "error_code": state.error_code,
            "duration_ms": round(elapsed * 1000),
            "tool_calls": len(state.tool_activity),
            "phases_ms": state.phases.rounded(),
        },
    )


async def _closing_events(
    start: services.TurnStart, state: TurnState, inputs: TurnInputs | None
) -> AsyncGenerator[TurnEvent, None]:
    """After the reply is saved: the error, ``done``, a generated title; then the reindex."""
    conversation_id = start.conversation_id
    if state.status == Message.Status.ERROR:
        yield error_event(state.error_code, state.error_message, conversation_id)
    yield {
        "type": "done",
        "conversation_id": conversation_id,
        "message_id": start.assistant_message_id,
        "status": state.status,
        # Rendered off the event loop: markdown-it can take its whole budget on a hostile reply.
        "html": await render_markdown_async(state.text) if state.text.strip() else "",
        "usage": state.usage(),
    }
    if state.status == Message.Status.COMPLETE and inputs is not None:
        try:
            titled = await generated_title(
                inputs.provider,
                conversation_id=conversation_id,
                message_id=start.assistant_message_id,
            )
        except Exception:  # the reply is out and saved; the first words stay the title
            logger.exception("Conversation %s: title not generated", conversation_id)
            titled = None
        if titled is not None:
            yield titled
    # After the answer is out: index this turn's messages (and embed them, when an embedder is
    # on) for later recall, and load them into this process's index, so that the next turn
    # reads none of it before its first text. A failure only leaves them to the next pass or
    # the catch-up.
    try:
        await reindex.after_reply()
    except Exception:
        logger.exception("Conversation %s: recall index not updated", conversation_id)


async def run_turn(**begin: Any) -> AsyncGenerator[TurnEvent, None]:
    """``begin_turn`` with these arguments, then ``stream_turn``: a refusal raises from the
    first ``anext()``."""
    start = await begin_turn(**begin)
    async with aclosing(stream_turn(start)) as events:
        async for event in events:
            yield event
