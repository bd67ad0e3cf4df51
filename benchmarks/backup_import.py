"""Hostile backup imports: time and peak memory of the check and preview of a 50 MB file.

    .venv/bin/python benchmarks/backup_import.py [--sqlite] [--mb 50] [--runs 3]

Builds one file of each hostile shape (tests/backup/hostile.py: valid rows refused only at the
end, a row of a million keys, deep nesting, a giant string, many bad rows, a huge envelope
field), then runs the preview (``backup_import(dry_run=True)``, the file read from disk as the
page and API do) in a fresh subprocess per run, which reports its wall time and its peak RSS
above idle (VmHWM after the import, less the resident size once Django started and connected,
the peak reset there).
Prints the median of the runs for each shape. The bound: 150 MB above idle.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._database import bench_environment, drop_database  # noqa: E402
from benchmarks._memory import idle_mb, status_mb  # noqa: E402

BOUND_MB = 150


def _child(path: str) -> None:
    import django

    django.setup()
    from django.db import connection

    from backup.services import backup_import
    from talorys.lib.errors import ValidationFailed

    connection.ensure_connection()
    idle = idle_mb()
    start = time.perf_counter()
    outcome = "imported"
    with open(path, "rb") as source:
        try:
            backup_import(source=source, dry_run=True)
        except ValidationFailed as refused:
            outcome = refused.message[:90]
    elapsed = time.perf_counter() - start
    print(
        json.dumps(
            {"seconds": elapsed, "above_idle_mb": status_mb("VmHWM") - idle, "outcome": outcome}
        )
    )


def _build(directory: str, megabytes: int) -> dict[str, str]:
    import django

    django.setup()
    from tests.backup.hostile import SHAPES

    paths = {}
    for name, make in SHAPES.items():
        path = str(Path(directory) / f"{name}.json")
        with open(path, "wb") as out:
            make(out, megabytes * 1024 * 1024)
        paths[name] = path
    return paths


def _run(path: str, env: dict[str, str]) -> dict:
    done = subprocess.run(
        [sys.executable, __file__, "--child", path],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sqlite", action="store_true", help="use SQLite even if PostgreSQL is up")
    parser.add_argument("--mb", type=int, default=50, help="size of each hostile file")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        _child(options.child)
        return
    data_dir, pg_name = bench_environment(options.sqlite, LOG_LEVEL="WARNING")
    env = dict(os.environ)
    try:
        paths = _build(data_dir, options.mb)
        from django.core.management import call_command
        from django.db import connections

        call_command("migrate", verbosity=0)
        print(f"database: {connections['default'].vendor}; {options.mb} MiB files, ", end="")
        print(f"median of {options.runs} runs; bound {BOUND_MB} MB above idle")
        connections.close_all()
        for name, path in paths.items():
            runs = [_run(path, env) for _ in range(options.runs)]
            seconds = statistics.median(run["seconds"] for run in runs)
            above = statistics.median(run["above_idle_mb"] for run in runs)
            print(f"  {name:14} {seconds:6.2f} s  {above:6.1f} MB above idle  {runs[0]['outcome']}")
    finally:
        if pg_name:
            drop_database(pg_name)


if __name__ == "__main__":
    main()
