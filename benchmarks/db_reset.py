"""What emptying the tables after a transactional test costs: Django's flush (a TRUNCATE of every
table, then post_migrate making the content types and permissions again) against the suite's
DELETEs that keep those two tables (tests/database.py), on a migrated throwaway database with a
few rows in it, as a test leaves it.

    .venv/bin/python benchmarks/db_reset.py [--runs 15]

PostgreSQL only: on SQLite the suite keeps Django's flush.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._database import drop_database, start_django
from benchmarks._results import figure


def _seed() -> None:
    """What a typical test leaves behind: the owner, a project with a task, a note."""
    from django.contrib.auth import get_user_model

    from talorys.workspace import services

    get_user_model().objects.create_superuser(username="owner", password="x")
    project = services.project_create(name="House")
    services.task_create(title="Call Sam", project_id=project.id)
    services.note_create(title="Travel", content="Ferries leave at 9.")


def _timed(reset, runs: int) -> float:
    times = []
    for _ in range(runs):
        _seed()
        started = time.perf_counter()
        reset()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    _url, pg_name = start_django(use_sqlite=False)
    if pg_name is None:
        sys.exit("PostgreSQL at 127.0.0.1:5432 does not answer: this benchmark needs it")
    try:
        from django.core.management import call_command

        from tests.database import _delete_everything

        call_command("migrate", verbosity=0)

        def flush() -> None:
            call_command("flush", verbosity=0, interactive=False, reset_sequences=False)

        flushed = _timed(flush, args.runs)
        deleted = _timed(lambda: _delete_everything("default"), args.runs)
    finally:
        from django.db import connections

        connections.close_all()
        drop_database(pg_name)
    print(f"Django's flush, median of {args.runs}: {flushed * 1000:.1f} ms")
    print(f"DELETE, keeping the content types, median of {args.runs}: {deleted * 1000:.1f} ms")
    print(f"{flushed / deleted:.0f}x")
    figure("db_reset", "DELETE per transactional test", deleted * 1000, "ms", database="pg")
    figure("db_reset", "flush per transactional test", flushed * 1000, "ms", database="pg")


if __name__ == "__main__":
    main()
