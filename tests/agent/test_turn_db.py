"""The turn's trips to the database (agent/runner/db.py) run on the turn's thread pool in the
suite as in production, each with a connection of its own that it gives back; and what the pool
relies on in asgiref and Django is still there (these fail naming the versions on an upgrade)."""

from __future__ import annotations

import inspect
import threading
from importlib.metadata import version as package_version
from typing import Any

from asgiref.sync import async_to_sync, sync_to_async
from django.db import connections

from agent.runner.db import db, together, trip_threads
from talorys.workspace.models import Project
from tests.agent.test_runner import TURN_DATABASE

pytestmark = TURN_DATABASE

VERSIONS = f"asgiref {package_version('asgiref')}, Django {package_version('django')}"


def _trip() -> tuple[str, int, bool]:
    """Where a trip ran: its thread's name, its connection, whether it reads committed rows."""
    return threading.current_thread().name, id(connections["default"]), Project.objects.exists()


def test_the_suite_runs_turns_on_the_production_thread_pool(settings):
    from config import settings as production

    assert settings.TALORYS_TURN_DB_THREADS == production.TALORYS_TURN_DB_THREADS > 0
    assert trip_threads() == production.TALORYS_TURN_DB_THREADS
    Project.objects.create(name="Committed")  # no test transaction: committed at once

    async def trip() -> tuple[str, int, bool]:
        return await db(_trip)()

    name, connection_id, sees = async_to_sync(trip)()

    assert name.startswith("turn-db"), f"{VERSIONS}: the trip ran on {name!r}, not the pool"
    assert connection_id != id(connections["default"]) and sees
    assert threading.current_thread().name != name


def test_trips_run_side_by_side_and_each_gives_its_connection_back():
    barrier = threading.Barrier(2, timeout=30)

    def meet() -> tuple[str, Any]:
        barrier.wait()  # both at once on two threads, or a BrokenBarrierError
        wrapper = connections["default"]  # this thread's own
        wrapper.ensure_connection()
        return threading.current_thread().name, wrapper

    async def both() -> tuple[tuple[str, Any], tuple[str, Any]]:
        return await together(db(meet)(), db(meet)())

    (first, one), (second, two) = async_to_sync(both)()

    assert first != second and one is not two
    # Closed at the trip's end: a pooled connection went back to the pool.
    assert one.connection is None and two.connection is None


def test_what_the_pool_relies_on_in_asgiref_is_there():
    parameters = inspect.signature(sync_to_async).parameters
    for name in ("thread_sensitive", "executor"):
        assert name in parameters, (
            f"{VERSIONS}: sync_to_async lost {name!r}; agent/runner/db.py runs the turn's "
            "trips on a pool of its own with sync_to_async(thread_sensitive=False, executor=...)"
        )
