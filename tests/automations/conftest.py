"""Fixtures for automations: the owner's zone, celery run inline, functions run at the same
moment in threads. The push service and the channels' receivers are tests/notifications'."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.db import connection

from config.celery import app as celery_app
from talorys.owner.services.settings import owner_settings_update
from tests.waiting import HANG_SECONDS


@pytest.fixture
def owner_zone(db) -> Callable[[str], None]:
    def set_zone(name: str) -> None:
        owner_settings_update(time_zone=name)

    return set_zone


@pytest.fixture
def eager() -> Iterator[None]:
    """Celery runs a task inline when it is sent (a real task call, no broker)."""
    saved = celery_app.conf.task_always_eager, celery_app.conf.task_eager_propagates
    celery_app.conf.task_always_eager = True
    celery_app.conf.task_eager_propagates = True
    yield
    celery_app.conf.task_always_eager, celery_app.conf.task_eager_propagates = saved


def in_threads(*functions: Callable[[], Any]) -> list[Any]:
    """Run the functions at the same moment in threads (each with its own DB connection)."""
    barrier = threading.Barrier(len(functions))
    results: list[Any] = [None] * len(functions)
    errors: list[BaseException] = []

    def runner(index: int, fn: Callable[[], Any]) -> None:
        try:
            barrier.wait(timeout=HANG_SECONDS)
            results[index] = fn()
        except BaseException as exc:  # reported in the main thread
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=runner, args=(i, fn)) for i, fn in enumerate(functions)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    if errors:
        raise errors[0]
    return results
