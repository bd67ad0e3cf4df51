"""The turn's hold on its conversation: polls for a cancel, renews the lease, saves the text.

The lease itself (a conditional UPDATE on the Conversation row) is agent/services.py's; this is
the running turn's side of it. A scheduled run has no conversation, hence ``NoLease``.

The renewal and the saves of the text so far are ``TurnLease.keep``'s, a task beside the turn:
they go on whatever the turn waits for (the model, a tool, the prompt's reads), so the lease can
be short (services.LEASE_SECONDS) and a process that dies frees its conversation within it,
leaving its reply with all but its last few seconds of text.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Protocol, TypeVar

from agent import services, turn_saves
from agent.runner.db import db
from agent.runner.opening import Opening, opening_read
from talorys.lib.errors import database_unavailable

logger = logging.getLogger(__name__)

# How often a streaming turn looks at its row for a cancel request (a cheap read).
POLL_SECONDS = 0.5
# The keeper's rhythm: it wakes every KEEP_TICK_SECONDS (no trip unless one is due), renews the
# lease every RENEW_SECONDS and saves the text so far once it has grown and SAVE_SECONDS have
# passed or SAVE_CHARS more streamed: one UPDATE of the reply's row, never one per token.
KEEP_TICK_SECONDS = 0.5
RENEW_SECONDS = services.LEASE_SECONDS / 3
SAVE_SECONDS = 2.0
SAVE_CHARS = 2048

R = TypeVar("R")


class TurnCancelled(Exception):
    """The owner asked to stop, or the turn lost its lease."""


class Lease(Protocol):
    def wait_budget(self) -> float:
        """How long the turn may wait for the model before it should ``check`` again."""
        ...

    async def check(self, *, force: bool = False) -> None:
        """Raise TurnCancelled when the turn must stop."""
        ...

    async def gate(self, then: Callable[[], R]) -> R:
        """``check(force=True)``, then ``then()`` (a reservation, and perhaps what else a trip
        to the database before a model call reads), in one trip; returns what ``then`` does."""
        ...


class TurnLease:
    """The turn's view of its row: polls for a cancel; its keeper renews the lease and saves
    the text so far (``kept``)."""

    def __init__(self, start: services.TurnStart, text: Callable[[], str]) -> None:
        self.start = start
        self.text = text  # what the reply has said so far
        self.polled_at = self.confirmed_at = self.renewed_at = self.saved_at = time.monotonic()
        self.saved_chars = 0

    def wait_budget(self) -> float:
        return max(0.05, POLL_SECONDS - (time.monotonic() - self.polled_at))

    async def check(self, *, force: bool = False) -> None:
        """Raise TurnCancelled when a cancel was asked for or the lease is lost. Rate-limited to
        one read per POLL_SECONDS, unless ``force``: before something that must not happen after
        an accepted cancel (a tool call, a model step)."""
        if force:
            await self.gate(lambda: None)
        elif time.monotonic() - self.polled_at >= POLL_SECONDS:
            try:
                await self.gate(lambda: None)
            except Exception as error:
                self._poll_failed(error)

    def _poll_failed(self, error: Exception) -> None:
        """A poll that found no database (a dropped connection, a restart) is tried again at the
        next one, for as long as a lease lasts: a trip's broken connection is discarded and the
        next takes another. Past that, or for any other error, the turn ends with it."""
        if (
            database_unavailable(error) is None
            or time.monotonic() - self.confirmed_at > services.LEASE_SECONDS
        ):
            raise error
        logger.warning("Conversation %s: lease poll failed (%s)", self.start.conversation_id, error)
        self.polled_at = time.monotonic()

    async def gate(self, then: Callable[[], R]) -> R:
        def heartbeat() -> tuple[bool, R | None]:
            alive = services.turn_heartbeat(
                conversation_id=self.start.conversation_id, turn_id=self.start.turn_id, renew=False
            )
            return alive, then() if alive else None

        alive, result = await db(heartbeat)()
        self.polled_at = self.confirmed_at = time.monotonic()
        if not alive:
            raise TurnCancelled
        return result  # type: ignore[return-value]  # then() ran: alive

    @asynccontextmanager
    async def kept(self) -> AsyncIterator[None]:
        """``keep`` runs while the block does, and has stopped when it ends."""
        keeper = asyncio.create_task(self.keep())
        try:
            yield
        finally:
            keeper.cancel()
            await asyncio.wait({keeper})  # a cancel of this task still reaches it

    async def keep(self) -> None:
        """Renew the lease and save the text so far, until cancelled (when the turn ends, before
        its reply is saved). A trip that fails is tried again at the next tick."""
        while True:
            await asyncio.sleep(KEEP_TICK_SECONDS)
            try:
                await self.keep_once()
            except Exception as error:
                failure = database_unavailable(error)
                log = logger.warning if failure else logger.exception
                log(
                    "Conversation %s: lease or text not kept (%s)",
                    self.start.conversation_id,
                    error,
                )

    async def keep_once(self) -> None:
        """The one trip the keeper's tick owes, if any: a renewal, a save of the text, or both."""
        now = time.monotonic()
        renew = now - self.renewed_at >= RENEW_SECONDS
        text = self.text()
        grown = len(text) - self.saved_chars
        save = grown > 0 and (now - self.saved_at >= SAVE_SECONDS or grown >= SAVE_CHARS)
        if not (renew or save):
            return
        start = self.start

        def trip() -> None:
            if save:
                turn_saves.turn_text_save(message_id=start.assistant_message_id, content=text)
            if renew:
                services.turn_heartbeat(
                    conversation_id=start.conversation_id, turn_id=start.turn_id, renew=True
                )

        await db(trip)()
        if save:
            self.saved_at, self.saved_chars = now, len(text)
        if renew:
            self.renewed_at = now

    async def opening_gate(self, then: Callable[[Opening], R]) -> R:
        """``gate`` for the turn's first model step, which also reads the summary, the settings'
        version and recall's clock in the heartbeat's statement (agent/runner/opening.py) and
        passes them to ``then``. Like every poll, it does not renew: the keeper does."""

        def heartbeat() -> tuple[Opening | None, R | None]:
            opening = opening_read(
                conversation_id=self.start.conversation_id, turn_id=self.start.turn_id
            )
            return opening, None if opening is None else then(opening)

        opening, result = await db(heartbeat)()
        self.polled_at = self.confirmed_at = time.monotonic()
        if opening is None:
            raise TurnCancelled
        return result  # type: ignore[return-value]  # then() ran: alive


class NoLease:
    """A scheduled run has no conversation to hold and nobody to cancel it."""

    def wait_budget(self) -> float:
        return POLL_SECONDS

    async def check(self, *, force: bool = False) -> None:
        return None

    async def gate(self, then: Callable[[], R]) -> R:
        return await db(then)()
