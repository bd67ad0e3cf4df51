"""Backup export and import: time and peak memory with 10,000 tasks, 5,000 notes, 5,000
memories and 20,000 messages.

    .venv/bin/python benchmarks/backup.py [--sqlite]

Sets up a throwaway database (PostgreSQL at 127.0.0.1:5432 when it answers, else SQLite), seeds
it, then runs each step in a fresh subprocess and reports its wall time and peak resident
memory (ru_maxrss), next to a subprocess that only starts Django (the baseline): export to a
file (``talorys_export``); import into the emptied database; the same import again, into the
database that now holds it all (every row compared, nothing written); and a dry run.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._database import bench_environment, drop_database  # noqa: E402
from benchmarks._results import figure  # noqa: E402

COUNTS = {"tasks": 10_000, "notes": 5_000, "memories": 5_000, "messages": 20_000}


def _setup() -> None:
    import django

    django.setup()


def _seed() -> None:
    import datetime as dt

    from django.utils import timezone

    from agent.models import Conversation, Message
    from memory.models import Memory
    from talorys.workspace.models import Note, Project, Task

    now = timezone.now()
    projects = Project.objects.bulk_create(Project(name=f"Project {n}") for n in range(20))
    Task.objects.bulk_create(
        (
            Task(
                title=f"Task {n}: water the garden beds",
                details="Check the hose first. " * 5,
                project=projects[n % 20],
                due_at=now + dt.timedelta(hours=n - 5000) if n % 3 else None,
            )
            for n in range(COUNTS["tasks"])
        ),
        batch_size=2000,
    )
    Note.objects.bulk_create(
        (
            Note(title=f"Note {n}", content=f"## Note {n}\n\nAbout project {n % 40}. " * 20)
            for n in range(COUNTS["notes"])
        ),
        batch_size=1000,
    )
    Memory.objects.bulk_create(
        (Memory(text=f"Fact number {n} about the owner") for n in range(COUNTS["memories"])),
        batch_size=2000,
    )
    conversations = Conversation.objects.bulk_create(
        Conversation(title=f"Chat {n}") for n in range(100)
    )
    Message.objects.bulk_create(
        (
            Message(
                conversation=conversations[n % 100],
                role="user" if n % 2 == 0 else "assistant",
                content=f"Message {n} about **the weekend plans**, the garden and a few errands.",
            )
            for n in range(COUNTS["messages"])
        ),
        batch_size=2000,
    )


def _child(step: str, path: str) -> None:
    """One measured step, in its own process: prints a JSON line with its time and peak RSS."""
    _setup()
    from django.core.management import call_command

    began = time.perf_counter()
    if step == "export":
        call_command("talorys_export", path, stdout=io.StringIO())
    elif step in ("import", "dry-run"):
        args = [path, "--dry-run"] if step == "dry-run" else [path]
        call_command("talorys_import", *args, stdout=io.StringIO())
    elapsed = time.perf_counter() - began
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"seconds": elapsed, "peak_mib": peak_kib / 1024}))


def _run(step: str, path: str, env: dict[str, str]) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", step, path],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"{step} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sqlite", action="store_true", help="use SQLite even if PostgreSQL is up")
    parser.add_argument("--child", nargs=2, metavar=("STEP", "FILE"), help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        _child(*options.child)
        return

    data_dir, pg_name = bench_environment(options.sqlite, LOG_LEVEL="WARNING")
    env = dict(os.environ)
    _setup()
    from django.core.management import call_command
    from django.db import connections

    path = str(Path(data_dir) / "backup.json")
    try:
        call_command("migrate", verbosity=0)
        _seed()
        engine = connections["default"].vendor
        connections.close_all()
        print(f"database: {engine}; " + ", ".join(f"{n:,} {k}" for k, n in COUNTS.items()))
        results = {"baseline (Django only)": _run("baseline", path, env)}
        results["export"] = _run("export", path, env)
        size = Path(path).stat().st_size
        call_command("flush", interactive=False, verbosity=0)
        connections.close_all()
        results["import into an empty database"] = _run("import", path, env)
        results["import again (all unchanged)"] = _run("import", path, env)
        results["dry run (preview)"] = _run("dry-run", path, env)
        print(f"backup file: {size / 1024 / 1024:.1f} MiB")
        print(f"{'step':34} {'seconds':>8} {'peak RSS MiB':>13}")
        for name, figures in results.items():
            print(f"{name:34} {figures['seconds']:8.2f} {figures['peak_mib']:13.0f}")
        # The step's time is counted after Django is set up; the baseline is the memory floor.
        floor = results["baseline (Django only)"]
        rows = sum(COUNTS.values())
        for name in ("export", "import into an empty database"):
            figure(
                "backup", f"{name}, {rows:,} rows", results[name]["seconds"], "s", database=engine
            )
            figure(
                "backup",
                f"{name}: peak RSS",
                results[name]["peak_mib"],
                "MiB",
                floor=floor["peak_mib"],
                floor_name="a process that only starts Django",
                database=engine,
            )
    finally:
        connections.close_all()
        if pg_name:
            drop_database(pg_name)


if __name__ == "__main__":
    main()
