"""The turn's trips to the database from async code."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import ParamSpec, TypeVar

from asgiref.sync import sync_to_async
from django.db import connection

P = ParamSpec("P")
R = TypeVar("R")


def db(fn: Callable[P, R]) -> Callable[P, Awaitable[R]]:
    """``sync_to_async(fn)`` that gives the thread's database connection back when ``fn`` ends.

    A turn spends seconds streaming between short trips to the database; a connection kept
    across them made each running turn hold one, and 120 concurrent turns ran PostgreSQL out of
    connections. Closing hands a pooled connection back to the pool (DATABASES' "pool" option,
    talorys/settings.py). Inside an atomic block (a test's transaction) it must stay open.
    """

    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        finally:
            if not connection.in_atomic_block:
                connection.close()

    return sync_to_async(call)
