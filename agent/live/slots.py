"""How many attaches API tokens may hold open at once: ``ATTACHES_PER_TOKEN`` each (8) and
``TOKEN_ATTACHES`` all together (32); the owner's session has no cap.

An attach waits as long as a reply runs, so a script could open hundreds of them; each one costs
a socket, a follower's queue and, while a reply is being claimed, a trip to the database twice a
second (attach.py). A slot is a cache key taken with ``add`` (atomic: Redis ``SET NX``, shared
by every web process; while Redis does not answer, this process's memory,
talorys/accounts/counters.py), so of any number of concurrent attaches at most the cap get one,
and the rest are refused with 429 at once. A slot lives ``SLOT_SECONDS`` and its attach renews
it every quarter of that: a process that dies mid-attach frees its slots within a minute.
With attach.py's (a waiting attach holds no database connection), this keeps the owner's own
requests from queueing behind a token's (tests/agent/test_attach_pool.py).
"""

from __future__ import annotations

import asyncio
import hashlib
import random
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass

from asgiref.sync import sync_to_async
from django.conf import settings
from django.core.cache.backends.base import BaseCache

from talorys.accounts.counters import counters_use
from talorys.lib.errors import RateLimited

SLOT_SECONDS = 60
# What a refused attach is told to wait: slots free as replies end, which takes seconds.
RETRY_AFTER_SECONDS = 10


@dataclass(frozen=True)
class Slots:
    """The cache keys an attach holds, and the value that says they are its own."""

    keys: tuple[str, ...]
    nonce: str


def slots_take(holder: str) -> Slots:
    """One of ``holder``'s (a token's, ``token:<prefix>``) slots and one of all tokens', or
    RateLimited (429, nothing held). Synchronous: it talks to the cache."""
    nonce = secrets.token_hex(8)
    digest = hashlib.sha256(holder.encode()).hexdigest()[:32]
    own = _take(f"attach-slot:{digest}", settings.ATTACHES_PER_TOKEN, nonce)
    if own is None:
        raise RateLimited(
            f"This API token has {settings.ATTACHES_PER_TOKEN} attaches open already, the most "
            "one token may hold at once: close one, or wait for a reply to end.",
            retry_after=RETRY_AFTER_SECONDS,
        )
    shared = _take("attach-slot:tokens", settings.TOKEN_ATTACHES, nonce)
    if shared is None:
        slots_release(Slots((own,), nonce))
        raise RateLimited(
            f"API tokens have {settings.TOKEN_ATTACHES} attaches open already, the most they may "
            "hold at once: close one, or wait for a reply to end.",
            retry_after=RETRY_AFTER_SECONDS,
        )
    return Slots((own, shared), nonce)


def _take(prefix: str, cap: int, nonce: str) -> str | None:
    """The key of a free slot among ``cap``, now taken, or None when every one is held."""
    keys = [f"{prefix}:{n}" for n in range(cap)]

    def take(store: BaseCache) -> str | None:
        held = store.get_many(keys)
        free = [key for key in keys if key not in held]
        random.shuffle(free)  # concurrent attaches try different slots first
        for key in free:
            if store.add(key, nonce, timeout=SLOT_SECONDS):
                return key
        return None

    return counters_use(take)


def slots_release(slots: Slots) -> None:
    """Give the slots back; a slot that expired and was taken by another attach is left to it."""

    def release(store: BaseCache) -> None:
        held = store.get_many(list(slots.keys))
        store.delete_many([key for key in slots.keys if held.get(key) == slots.nonce])

    counters_use(release)


def _renew(slots: Slots) -> None:
    counters_use(lambda store: [store.touch(key, SLOT_SECONDS) for key in slots.keys])


@asynccontextmanager
async def slots_held(slots: Slots | None) -> AsyncIterator[None]:
    """Keep ``slots`` (None: nothing to keep) while the block runs, then give them back."""
    if slots is None:
        yield
        return
    renewing = asyncio.ensure_future(_renewing(slots))
    try:
        yield
    finally:
        renewing.cancel()
        with suppress(asyncio.CancelledError):
            await renewing
        await sync_to_async(slots_release)(slots)


async def _renewing(slots: Slots) -> None:
    while True:
        await asyncio.sleep(SLOT_SECONDS / 4)
        await sync_to_async(_renew)(slots)
