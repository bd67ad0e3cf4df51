"""Fixtures for automations: the owner's zone, functions run at the same moment in threads.
Celery inline is tests/conftest.py's ``eager``; the push service and the channels' receivers are
tests/notifications'."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection

from talorys.owner.services.settings import owner_settings_update
from tests.waiting import HANG_SECONDS


@pytest.fixture
def owner_zone(db) -> Callable[[str], None]:
    def set_zone(name: str) -> None:
        owner_settings_update(time_zone=name)

    return set_zone


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
