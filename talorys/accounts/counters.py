"""Where the throttles' counts live (failed logins, an MCP token's requests a minute): the cache
(Redis when REDIS_URL is set, shared by every web process) or, while Redis does not answer,
this process's memory.

Logging in needs the database only, so a Redis outage must not lock the owner out (every login
answered 500). While Redis is away the throttles still hold, per process instead of across
processes (the usual install has one web process); the counts in Redis count again once it is
back.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from typing import TypeVar

from django.core.cache import cache
from django.core.cache.backends.base import BaseCache
from django.core.cache.backends.locmem import LocMemCache
from redis.exceptions import RedisError

log = logging.getLogger(__name__)

T = TypeVar("T")

_in_process = LocMemCache("talorys-counters", {})


def counters_use(operation: Callable[[BaseCache], T]) -> T:
    """``operation`` on the shared cache, or on this process's own when Redis does not answer
    (refused, timed out, lost: redis-py's errors; a local cache raises none of them)."""
    try:
        return operation(cache)
    except RedisError:
        log.warning("Redis does not answer: throttles count in this process's memory")
        return operation(_in_process)


def _hit(store: BaseCache, key: str, window: int) -> int:
    # add() is a no-op when the key exists, so the window starts at the first hit.
    store.add(f"{key}:since", time.time(), timeout=window)
    store.add(key, 0, timeout=window)
    try:
        return store.incr(key)
    except ValueError:  # expired between add and incr
        store.set(key, 1, timeout=window)
        return 1


def counter_hit(key: str, *, window: int) -> int:
    """One more under ``key`` in its fixed window of ``window`` seconds (which starts at the
    first hit); the count so far, this one included. cache.incr is atomic in every backend we
    use (locmem locks, Redis INCR), so of N concurrent hits each sees its own count: a limit
    checked against it lets exactly ``limit`` through, whatever the processes."""
    return counters_use(functools.partial(_hit, key=key, window=window))


def counter_retry_after(key: str, *, window: int) -> int:
    """Whole seconds until ``key``'s window ends (1 to ``window``)."""
    started = counters_use(lambda store: store.get(f"{key}:since")) or time.time()
    remaining = int(started + window - time.time()) + 1
    return max(1, min(remaining, window))
