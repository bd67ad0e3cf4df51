"""The turn's hold on its conversation: polls for a cancel and renews the lease.

The lease itself (a conditional UPDATE on the Conversation row) is agent/services.py's; this is
the running turn's side of it. A scheduled run has no conversation, hence ``NoLease``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol, TypeVar

from agent import services
from agent.runner.db import db
from agent.runner.opening import Opening, opening_read

# How often a streaming turn looks at its row for a cancel request (a cheap read; every
# LEASE_SECONDS / 3 it is the lease renewal instead).
POLL_SECONDS = 0.5
RENEW_SECONDS = services.LEASE_SECONDS / 3

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
        if force or time.monotonic() - self.polled_at >= POLL_SECONDS:
            await self.gate(lambda: None)

    async def gate(self, then: Callable[[], R]) -> R:
        renew = time.monotonic() - self.renewed_at >= RENEW_SECONDS

        def heartbeat() -> tuple[bool, R | None]:
            alive = services.turn_heartbeat(
                conversation_id=self.start.conversation_id, turn_id=self.start.turn_id, renew=renew
            )
            return alive, then() if alive else None

        alive, result = await db(heartbeat)()
        self.polled_at = time.monotonic()
        if renew:
            self.renewed_at = self.polled_at
        if not alive:
            raise TurnCancelled
        return result  # type: ignore[return-value]  # then() ran: alive

    async def opening_gate(self, then: Callable[[Opening], R]) -> R:
        """``gate`` for the turn's first model step, which also reads the summary, the settings'
        version and recall's clock in the heartbeat's statement (agent/runner/opening.py) and
        passes them to ``then``. It does not renew: the claim took the lease a moment ago."""

        def heartbeat() -> tuple[Opening | None, R | None]:
            opening = opening_read(
                conversation_id=self.start.conversation_id, turn_id=self.start.turn_id
            )
            return opening, None if opening is None else then(opening)

        opening, result = await db(heartbeat)()
        self.polled_at = time.monotonic()
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
