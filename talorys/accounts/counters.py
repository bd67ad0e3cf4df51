"""Where the failed-login counts live: the cache (Redis when REDIS_URL is set, shared by every
web process) or, while Redis does not answer, this process's memory.

Logging in needs the database only, so a Redis outage must not lock the owner out (every login
answered 500). While Redis is away the throttle still holds, per process instead of across
processes (the usual install has one web process); the counts in Redis count again once it is
back.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar

from django.core.cache import cache
from django.core.cache.backends.base import BaseCache
from django.core.cache.backends.locmem import LocMemCache
from redis.exceptions import RedisError

log = logging.getLogger(__name__)

T = TypeVar("T")

_in_process = LocMemCache("talorys-login-counters", {})


def counters_use(operation: Callable[[BaseCache], T]) -> T:
    """``operation`` on the shared cache, or on this process's own when Redis does not answer
    (refused, timed out, lost: redis-py's errors; a local cache raises none of them)."""
    try:
        return operation(cache)
    except RedisError:
        log.warning("Redis does not answer: failed logins are counted in this process's memory")
        return operation(_in_process)
