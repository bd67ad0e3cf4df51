"""Running a claimed turn as a task of this process, to its end, whoever follows it."""

from __future__ import annotations

import asyncio
import contextvars
import logging
from contextlib import aclosing

from asgiref.sync import SyncToAsync

from agent import services
from agent.live.mirror import mirror_attach
from agent.live.ready import reply_ready_notice
from agent.live.turns import _END, LiveTurn, register, unregister
from agent.runner import stream_turn

log = logging.getLogger(__name__)

# The running turns' tasks: the event loop keeps only weak references.
_tasks: set[asyncio.Task[None]] = set()


def turn_run(start: services.TurnStart) -> LiveTurn:
    """Run a claimed turn (``begin_turn``'s) as a task of this process; follow it with
    ``LiveTurn.follow``, from the start, before the next await."""
    turn = LiveTurn(start)
    mirror_attach(turn)
    register(turn)
    # Not in the caller's context: a request's thread-sensitive context ends with the request,
    # and asgiref refuses a task that outlives it. The turn's trips run on their own threads.
    context = contextvars.copy_context()
    context.run(SyncToAsync.thread_sensitive_context.set, None)  # type: ignore[arg-type]
    task = asyncio.get_running_loop().create_task(
        _drive(turn), name=f"turn-{start.conversation_id}", context=context
    )
    turn.task = task
    _tasks.add(task)
    task.add_done_callback(_tasks.discard)
    return turn


async def _drive(turn: LiveTurn) -> None:
    try:
        async with aclosing(stream_turn(turn.start)) as events:
            async for event in events:
                turn.publish(dict(event))
    except Exception:  # stream_turn saves the reply whatever happens; this is a bug in a hook
        log.exception("Conversation %s: the turn's events stopped", turn.conversation_id)
    finally:
        unregister(turn)
        turn.end()
        for hook in turn.publish_hooks:
            hook(_END)
    await reply_ready_notice(turn)
