"""The recall index's pass after a reply, shared by the turns that end together.

Each reply's messages are indexed once it is out (memory.services.reindex_after_reply: what
changed since the last pass, a few vectors, and this process's copy of the index brought up to
date). A pass costs the same for one reply as for fifty, and
under load fifty replies end within a pass's time: one pass each made the web process spend
more on indexing than on the turns themselves. So a process runs one pass at a time (per event
loop), and a reply that ends while one runs waits for the next, which starts after it and
covers every reply that waited for it: ``after_reply`` returns once a pass that began after
the call has ended, as a pass of its own would have, so what a turn's caller sees is unchanged.
"""

from __future__ import annotations

import asyncio
import weakref
from dataclasses import dataclass

from agent.runner.db import db
from memory import services as memory_services


@dataclass
class _Passes:
    # The next pass, not started yet: whoever asks now waits for it.
    next: asyncio.Future[None] | None = None
    running: bool = False


_LOOPS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Passes] = weakref.WeakKeyDictionary()


async def after_reply() -> None:
    """Index what changed up to now; raises what the pass raised. Cancelling the caller leaves
    the pass running for the others."""
    loop = asyncio.get_running_loop()
    passes = _LOOPS.setdefault(loop, _Passes())
    if passes.next is None:
        passes.next = loop.create_future()
    waited = passes.next
    if not passes.running:
        passes.running = True
        loop.create_task(_run(passes))
    await asyncio.shield(waited)


async def _run(passes: _Passes) -> None:
    """Passes one after the other while someone waits for the next."""
    try:
        while passes.next is not None:
            done, passes.next = passes.next, None
            try:
                await db(memory_services.reindex_after_reply)()
            except Exception as error:  # each waiter logs it as its own
                done.set_exception(error)
                done.exception()  # retrieved: its waiters may all have gone
            else:
                done.set_result(None)
            finally:
                if not done.done():  # this task was cancelled (the loop is shutting down)
                    done.cancel()
    finally:
        passes.running = False
