"""An automation's stored prompt, run by the model in scheduled mode: no conversation, no lease,
nobody watching the stream. The run's receipt then saves the prompt and the answer as a
conversation of their own (automations/services/runs.py), which the owner can continue."""

from __future__ import annotations

import logging
import secrets
import time
from contextlib import aclosing
from dataclasses import dataclass

from asgiref.sync import async_to_sync

from agent import prompt
from agent.executor import ToolActivity, ToolExecutor
from agent.runner.db import db
from agent.runner.events import TurnState
from agent.runner.inputs import TurnInputs, read_inputs
from agent.runner.lease import NoLease
from agent.runner.model_loop import model_loop
from talorys.lib.logs import turn_scope
from talorys.lib.tools import ToolContext
from talorys.owner.services.usage import usage_record_tokens
from talorys.providers import provider_for
from talorys.providers.base import ChatMessage, Provider, ProviderError

logger = logging.getLogger(__name__)


@dataclass
class ScheduledReply:
    text: str
    tool_activity: list[ToolActivity]


def run_scheduled_reply(
    *, prompt: str, source: str, usage: dict[str, int] | None = None
) -> ScheduledReply:
    """An automation's stored prompt, run by the model in scheduled mode: read tools plus
    notify_owner only (the executor enforces it), steps and output capped, and both the
    scheduled and the ordinary AI budget reserved before every provider call. The answer comes
    with the tools the model called: what a run's conversation keeps
    (automations/services/runs.py, whose worker task calls this: it is synchronous).

    Raises ProviderError or BudgetExhausted; the automation records them on its run receipt.
    ``usage``, when given, is filled with what the run spent (requests, input_tokens,
    output_tokens) even when it raises: the receipt records it either way.

    Its log lines carry a turn id of its own (no conversation holds one).
    """
    return async_to_sync(_run)(prompt_text=prompt, source=source, usage=usage)


async def _run(*, prompt_text: str, source: str, usage: dict[str, int] | None) -> ScheduledReply:
    with turn_scope(secrets.token_hex(16)):
        started = time.monotonic()
        logger.info("Scheduled turn started: %s", source)
        inputs = await db(read_inputs)(text=prompt_text)
        executor = ToolExecutor(
            ctx=ToolContext(mode="scheduled", source=source), max_tool_calls=inputs.max_tool_calls
        )
        messages = [
            ChatMessage(
                role="system", content=inputs.system_prompt() + "\n\n" + prompt.SCHEDULED_NOTE
            ),
            ChatMessage(role="user", content=prompt_text),
        ]
        state = TurnState()
        # A worker's event loop lives for one run: its provider is made and closed here.
        provider = provider_for(inputs.provider)
        status = "error"  # until the loop ends with an answer
        try:
            await _steps_run(provider, executor, inputs, messages, state)
            status = "ok"
        except ProviderError as error:
            logger.warning(
                "Provider error (%s): %s", error.kind, error.message, extra={"kind": error.kind}
            )
            raise
        finally:
            await provider.aclose()
            await _spent_record(state, usage)
            _log_end(source, status, started, state)
        return ScheduledReply(text=state.text.strip(), tool_activity=state.tool_activity)


async def _steps_run(
    provider: Provider,
    executor: ToolExecutor,
    inputs: TurnInputs,
    messages: list[ChatMessage],
    state: TurnState,
) -> None:
    """The model loop to its answer, with both budgets reserved before every provider call."""
    steps = model_loop(
        provider,
        NoLease(),
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


async def _spent_record(state: TurnState, usage: dict[str, int] | None) -> None:
    """Fill ``usage`` (for the run's receipt) and count the tokens spent."""
    if usage is not None:
        usage.update(
            requests=state.requests,
            input_tokens=state.input_tokens,
            output_tokens=state.output_tokens,
        )
    if state.input_tokens or state.output_tokens:
        await db(usage_record_tokens)(
            input_tokens=state.input_tokens, output_tokens=state.output_tokens
        )


def _log_end(source: str, status: str, started: float, state: TurnState) -> None:
    elapsed = time.monotonic() - started
    logger.info(
        "Scheduled turn ended: %s, %s in %.2f s (%d model requests, %d tool calls)",
        source,
        status,
        elapsed,
        state.requests,
        len(state.tool_activity),
        extra={
            "status": status,
            "duration_ms": round(elapsed * 1000),
            "tool_calls": len(state.tool_activity),
        },
    )
