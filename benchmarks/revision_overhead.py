"""What keeping revisions and the bin costs: a task update that records a revision versus one
that changes nothing (so records none), and listing a bin of 1,000 items.

    .venv/bin/python benchmarks/revision_overhead.py [--calls 300] [--sqlite]

A throwaway database (PostgreSQL at 127.0.0.1:5432 when it answers, else SQLite), as in
benchmarks/turn_overhead.py. Prints the median per call of each of 3 runs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.turn_overhead import _create_database, _drop_database  # noqa: E402


def _per_call_ms(fn, calls: int) -> float:
    times = []
    for n in range(calls):
        began = time.perf_counter()
        fn(n)
        times.append(time.perf_counter() - began)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--sqlite", action="store_true")
    options = parser.parse_args()
    data_dir = tempfile.mkdtemp(prefix="talorys-bench-")
    database_url, pg_name = _create_database(options.sqlite, data_dir)
    os.environ.update(
        {
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DATABASE_URL": database_url,
            "TALORYS_DATA_DIR": data_dir,
        }
    )
    os.environ.pop("REDIS_URL", None)
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connections
    from django.utils import timezone

    from talorys.history.bin import bin_list
    from talorys.lib.actors import Actor
    from talorys.workspace import services
    from talorys.workspace.models import Task

    try:
        call_command("migrate", verbosity=0)
        print(f"database: {connections['default'].vendor}; {options.calls} calls a run")
        task = services.task_create(title="Bench")
        chat = Actor(source="chat", conversation_id=1, message_id=1)
        Task.objects.bulk_create(Task(title=f"Binned {n}") for n in range(1000))
        Task.objects.exclude(pk=task.pk).update(deleted_at=timezone.now())
        for run in range(3):
            recorded = _per_call_ms(
                lambda n, run=run: services.task_update(
                    task_id=task.pk, title=f"T{run}-{n}", actor=chat
                ),
                options.calls,
            )
            task.refresh_from_db()
            unchanged = _per_call_ms(
                lambda n: services.task_update(task_id=task.pk, title=task.title, actor=chat),
                options.calls,
            )
            listing = _per_call_ms(lambda n: bin_list(), 20)
            print(
                f"run {run + 1}: update with revision {recorded:.3f} ms, without "
                f"{unchanged:.3f} ms (revision +{recorded - unchanged:.3f} ms); "
                f"bin list of 1,000: {listing:.1f} ms"
            )
    finally:
        connections.close_all()
        if pg_name:
            _drop_database(pg_name)


if __name__ == "__main__":
    main()
