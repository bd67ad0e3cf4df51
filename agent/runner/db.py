"""The turn's trips to the database from async code."""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import connection

P = ParamSpec("P")
R = TypeVar("R")
A = TypeVar("A")
B = TypeVar("B")


def db(fn: Callable[P, R]) -> Callable[P, Awaitable[R]]:
    """``sync_to_async(fn)`` that gives the thread's database connection back when ``fn`` ends.

    A turn spends seconds streaming between short trips to the database; a connection kept
    across them made each running turn hold one, and 120 concurrent turns ran PostgreSQL out of
    connections. Closing hands a pooled connection back to the pool (DATABASES' "pool" option,
    config/settings.py). Inside an atomic block (a test's transaction) it must stay open.

    The trips run on threads of their own (``TALORYS_TURN_DB_THREADS``; ``0``: on the one thread
    that also runs every synchronous view and socket check), so turns and requests stop queueing
    behind each other (benchmarks/load.py: time to first text 12.4 s -> 3.4 s under 50 turns, and
    a burst of 200 turns all connected). A trip takes a connection and gives it back, so what it
    writes is committed when it ends, and the next trip, on another thread and connection, sees
    only committed rows (so do the tests: they run the same pool, tests/agent/test_turn_db.py).

    It relies on asgiref's ``sync_to_async(thread_sensitive=False, executor=...)`` running the
    call on the given executor, and on Django's connections being per thread, opened on first use
    and closed by ``close()``; tests/agent/test_turn_db.py fails naming both versions when an
    upgrade changes either.
    """

    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        _in_flight.add(1)
        try:
            return fn(*args, **kwargs)
        finally:
            connection_give_back()
            _in_flight.add(-1)

    def trip(*args: P.args, **kwargs: P.kwargs) -> Awaitable[R]:
        threads = trip_threads()
        if not threads:
            return sync_to_async(call)(*args, **kwargs)
        return sync_to_async(call, thread_sensitive=False, executor=_executor(threads))(
            *args, **kwargs
        )

    return trip


async def together(first: Awaitable[A], second: Awaitable[B]) -> tuple[A, B]:
    """Both trips at once (on threads of their own, when ``trip_threads()``), each to its end:
    the first one's error is raised only once the other is done too, so that no trip is left
    holding a connection behind a turn that has moved on."""
    one, two = await asyncio.gather(first, second, return_exceptions=True)
    for outcome in (one, two):
        if isinstance(outcome, BaseException):
            raise outcome
    return one, two  # type: ignore[return-value]


class _Count:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.value = 0

    def add(self, step: int) -> None:
        with self._lock:
            self.value += step


# Trips running now, on any thread: a trip goes on in its thread after its awaiting task is
# cancelled, and the suite waits for them before it empties a test's tables.
_in_flight = _Count()


def trips_in_flight() -> int:
    return _in_flight.value


def connection_give_back() -> None:
    """Close this thread's database connection, which hands a pooled one back to the pool; inside
    an atomic block (a test's transaction) it must stay open."""
    if not connection.in_atomic_block:
        connection.close()


async def give_back_request_connection() -> None:
    """Close the connection of the thread the request's synchronous code ran on (begin_turn's),
    once the response has started. Django gives each request a thread of its own; its
    connection would otherwise stay checked out of the pool for as long as the reply streams,
    since the turn's trips run on other threads."""
    if trip_threads():
        await sync_to_async(connection_give_back)()


def trip_threads() -> int:
    """How many trips may run at once: the setting, and fewer than the pool's connections, so
    that a trip never waits for one (the request thread holds one more)."""
    threads = settings.TALORYS_TURN_DB_THREADS
    pool = settings.DATABASES["default"].get("OPTIONS", {}).get("pool")
    if isinstance(pool, dict) and "max_size" in pool:
        threads = min(threads, int(pool["max_size"]) - 1)
    return max(threads, 0)


@functools.cache
def _executor(threads: int) -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=threads, thread_name_prefix="turn-db")
