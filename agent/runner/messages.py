"""A chat turn's opening messages: the system prompt and the history window, with the running
summary folded forward first when enough has overflowed the window."""

from __future__ import annotations

import logging
from contextlib import aclosing

from agent import context, services
from agent.runner.db import db
from agent.runner.inputs import TurnInputs
from agent.runner.lease import Lease
from agent.runner.model_loop import stream_step
from talorys.lib.errors import BudgetExhausted
from talorys.owner.selectors import usage_remaining
from talorys.owner.services.usage import usage_reserve
from talorys.providers.base import ChatMessage, Provider, ProviderError, TextDelta

logger = logging.getLogger(__name__)


async def _summarize(
    provider: Provider,
    lease: Lease,
    start: services.TurnStart,
    inputs: TurnInputs,
    window: context.Window,
) -> str:
    """Fold the overflow into the running summary; on failure keep the old one and go on."""
    try:
        if not provider.is_demo:  # the demo asks no model server: nothing to count
            await db(usage_reserve)(kind="ai")
        parts: list[str] = []
        async with aclosing(
            stream_step(
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
    await db(services.conversation_summary_store)(
        conversation_id=start.conversation_id,
        summary=summary,
        summary_upto=window.overflow[-1].id,
    )
    return summary


async def turn_messages(
    provider: Provider, lease: Lease, start: services.TurnStart, inputs: TurnInputs
) -> list[ChatMessage]:
    window = inputs.window
    assert window is not None  # set by read_chat_inputs
    summary = inputs.summary
    # The day's remaining budget is read only when enough overflowed to want a summary. The
    # first step's request is reserved already (read_chat_inputs), so it counts as left.
    if context.overflow_needs_summary(len(window.overflow)) and context.budget_allows_summary(
        left_before_turn=await db(usage_remaining)(kind="ai") + 1
    ):
        summary = await _summarize(provider, lease, start, inputs, window)
    system = inputs.system_prompt(summary=summary, outcomes=inputs.outcomes)
    history = context.window_messages(window)
    if inputs.images and history and history[-1].role == "user":  # the message answered
        history[-1].images = inputs.images
    return [ChatMessage(role="system", content=system), *history]
