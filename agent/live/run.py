"""Running a claimed turn as a task of this process, to its end, whoever follows it."""

from __future__ import annotations

import asyncio
import contextvars
import functools
import logging
from collections.abc import Awaitable, Callable
from contextlib import aclosing

from asgiref.sync import SyncToAsync

from agent import services
from agent.live.mirror import mirror_attach
from agent.live.ready import page_follows, reply_ready_notice
from agent.live.turns import _END, LiveTurn, register, unregister
from agent.runner import stream_turn

log = logging.getLogger(__name__)

# The running turns' tasks: the event loop keeps only weak references.
_tasks: set[asyncio.Task[None]] = set()


def turn_run(
    start: services.TurnStart,
    after_end: Callable[[LiveTurn], Awaitable[None]] = reply_ready_notice,
) -> LiveTurn:
    """Run a claimed turn (``begin_turn``'s) as a task of this process; follow it with
    ``LiveTurn.follow``, from the start, before the next await. ``after_end`` is awaited once
    its events have ended ("Your reply is ready", ready.py, unless the caller says otherwise)."""
    turn = LiveTurn(start)
    mirror_attach(turn)
    register(turn)
    # Not in the caller's context: a request's thread-sensitive context ends with the request,
    # and asgiref refuses a task that outlives it. The turn's trips run on their own threads.
    context = contextvars.copy_context()
    context.run(SyncToAsync.thread_sensitive_context.set, None)  # type: ignore[arg-type]
    task = asyncio.get_running_loop().create_task(
        _drive(turn, after_end), name=f"turn-{start.conversation_id}", context=context
    )
    turn.task = task
    _tasks.add(task)
    task.add_done_callback(_tasks.discard)
    return turn


async def _drive(turn: LiveTurn, after_end: Callable[[LiveTurn], Awaitable[None]]) -> None:
    # The owner's own turn (not a /v1 client's, which names its proposer): whether their page
    # follows it decides if a proposal is announced (approvals/telling.py).
    watched = None if turn.start.proposer else functools.partial(page_follows, turn)
    try:
        async with aclosing(stream_turn(turn.start, watched)) as events:
            async for event in events:
                turn.publish(dict(event))
    except Exception:  # stream_turn saves the reply whatever happens; this is a bug in a hook
        log.exception("Conversation %s: the turn's events stopped", turn.conversation_id)
    finally:
        unregister(turn)
        turn.end()
        for hook in turn.publish_hooks:
            hook(_END)
    await after_end(turn)
