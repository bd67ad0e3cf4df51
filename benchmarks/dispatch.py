"""Dispatch benchmark: N automations due at the same instant, real beat and workers on Redis.

    .venv/bin/python benchmarks/dispatch.py [--count 1000] [--workers 2] [--concurrency 4]
                                            [--dispatch-seconds 2]

Sets up its own throwaway PostgreSQL database (dropped at the end) and uses a Redis database it
flushes, so it can be rerun at will. Prints the dispatch lag (scheduled slot -> run start, p50
and p99), runs per second, and duplicates (must be 0: a slot run twice, or a second
notification for one automation). The lag includes waiting for beat's next dispatcher tick, so
it is bounded below by about half the dispatch interval.

Needs PostgreSQL (TALORYS_BENCH_POSTGRES, default postgres://postgres@127.0.0.1:5432/postgres)
and Redis (TALORYS_BENCH_REDIS_URL, default redis://127.0.0.1:6379/14).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks._results import figure  # noqa: E402

# The targets: 1,000 due at once start within 5 s of their slot (p99), 10,000 within 30 s.
TARGETS_P99_S = {1000: 5.0, 10_000: 30.0}


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=4, help="processes per worker")
    parser.add_argument("--dispatch-seconds", type=int, default=2, help="beat's dispatch interval")
    parser.add_argument("--lead-seconds", type=int, default=15, help="time to start the workers")
    options = parser.parse_args()

    import psycopg
    import redis

    admin_url = os.environ.get(
        "TALORYS_BENCH_POSTGRES", "postgres://postgres@127.0.0.1:5432/postgres"
    )
    redis_url = os.environ.get("TALORYS_BENCH_REDIS_URL", "redis://127.0.0.1:6379/14")
    db_name = f"talorys_bench_{os.getpid()}"
    data_dir = Path(tempfile.mkdtemp(prefix="talorys-bench-"))
    redis.Redis.from_url(redis_url).flushdb()
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{db_name}"')
    database_url = admin_url.rsplit("/", 1)[0] + f"/{db_name}"
    env = os.environ | {
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "TALORYS_DATA_DIR": str(data_dir),
        "TALORYS_DISPATCH_SECONDS": str(options.dispatch_seconds),
        "LOG_LEVEL": "WARNING",
    }
    os.environ.update(env)
    processes: list[subprocess.Popen] = []
    try:
        import django

        django.setup()
        from django.core.management import call_command
        from django.db import connection, transaction
        from django.db.models import Count
        from django.utils import timezone

        from automations.models import Automation, AutomationRun
        from automations.services.crud import automation_create
        from talorys.lib.schedules import schedule_dump, schedule_parse
        from talorys.notifications.models import Notification

        call_command("migrate", interactive=False, verbosity=0)
        later = {"type": "once", "at": (timezone.now() + dt.timedelta(days=1)).isoformat()}
        with transaction.atomic():
            for i in range(options.count):
                automation_create(
                    name=f"Reminder {i}", kind="reminder", message="Benchmark", schedule=later
                )
        # Made for later, then moved to the slot in one UPDATE: making 10,000 takes longer than
        # the lead, which is the time the workers have to start.
        slot = (timezone.now() + dt.timedelta(seconds=options.lead_seconds)).replace(microsecond=0)
        once = schedule_dump(schedule_parse({"type": "once", "at": slot.isoformat()}))
        Automation.objects.update(schedule=once, next_run_at=slot)
        connection.close()

        def celery(*args: str) -> subprocess.Popen:
            return subprocess.Popen(
                [sys.executable, "-m", "celery", "-A", "config", *args, "-l", "warning"],
                cwd=ROOT,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=(data_dir / f"{args[0]}-{len(processes)}.log").open("wb"),
            )

        for n in range(options.workers):
            processes.append(
                celery("worker", "-n", f"bench{n}@%h", "--concurrency", str(options.concurrency))
            )
        processes.append(
            celery("beat", "--pidfile", str(data_dir / "beat.pid"), "-s", str(data_dir / "beat"))
        )

        deadline = time.monotonic() + options.lead_seconds + 120
        finished = 0
        while time.monotonic() < deadline:
            finished = AutomationRun.objects.exclude(status="running").count()
            if finished >= options.count:
                break
            if any(p.poll() is not None for p in processes):
                print("a celery process exited; see", data_dir, file=sys.stderr)
                break
            time.sleep(0.5)
        time.sleep(options.dispatch_seconds + 1)  # let a duplicate, if any, show up

        runs = list(AutomationRun.objects.values("slot", "started_at", "finished_at", "status"))
        lags = [(r["started_at"] - r["slot"]).total_seconds() for r in runs]
        # A chunk's runs share one transaction and start time: the finish shows when each
        # notification was committed.
        done_lags = [(r["finished_at"] - r["slot"]).total_seconds() for r in runs]
        # Each automation has one slot: a second receipt or notification is a duplicate.
        duplicate_runs = sum(
            row["n"] - 1
            for row in AutomationRun.objects.values("automation")
            .annotate(n=Count("id"))
            .filter(n__gt=1)
        )
        duplicate_notifications = sum(
            row["n"] - 1
            for row in Notification.objects.values("source").annotate(n=Count("id")).filter(n__gt=1)
        )
        ok = sum(r["status"] == "ok" for r in runs)
        span = (
            (
                max(r["finished_at"] for r in runs) - min(r["started_at"] for r in runs)
            ).total_seconds()
            if runs
            else 0.0
        )
        print(
            f"dispatch: {options.count} reminders due at the same instant; {options.workers} "
            f"workers x {options.concurrency} processes on Redis; beat ticks every "
            f"{options.dispatch_seconds} s; PostgreSQL"
        )
        print(f"runs: {ok} ok of {len(runs)} receipts (expected {options.count})")
        if lags:
            print(
                f"dispatch lag (slot -> run start): p50 {statistics.median(lags):.2f} s, "
                f"p99 {percentile(lags, 0.99):.2f} s, max {max(lags):.2f} s"
            )
            print(
                f"slot -> run finish: p50 {statistics.median(done_lags):.2f} s, "
                f"p99 {percentile(done_lags, 0.99):.2f} s"
            )
            print(
                f"throughput: {len(runs) / span if span else float('inf'):.0f} runs/s "
                f"(first start -> last finish {span:.2f} s)"
            )
            target = next((t for n, t in sorted(TARGETS_P99_S.items()) if options.count <= n), None)
            figure(
                "dispatch",
                f"{options.count} automations due at once: lag p99",
                percentile(lags, 0.99),
                "s",
                floor=options.dispatch_seconds / 2,
                floor_name="half of beat's dispatch interval (the mean wait for the next tick)",
                target=target,
                database="postgresql",
            )
        duplicates = duplicate_runs + duplicate_notifications
        print(f"duplicates: {duplicates}")
        figure(
            "dispatch",
            f"{options.count} automations due at once: duplicates",
            duplicates,
            "",
            target=0,
            database="postgresql",
        )
        connection.close()
        return 0 if duplicates == 0 and ok == options.count else 1
    finally:
        for process in processes:
            if process.poll() is None:
                process.terminate()
        for process in processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{db_name}" WITH (FORCE)')
        shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
