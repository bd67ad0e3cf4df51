"""Channel delivery: a reminder's slot until its message arrives on a local channel (a JSON
webhook receiver in this process, through Apprise), with a real celery beat and worker.

    .venv/bin/python benchmarks/channel_latency.py [--mode embedded|redis] [--count 5]

embedded: what `make run` gives with nothing configured (SQLite in a throwaway data dir, the
file-system broker, no Redis). redis: PostgreSQL (a throwaway database, dropped at the end;
TALORYS_BENCH_POSTGRES, default postgres://postgres@127.0.0.1:5432/postgres) and a Redis
database it flushes (TALORYS_BENCH_REDIS_URL, default redis://127.0.0.1:6379/14).

Each reminder has its own slot, a few seconds apart, so they do not queue behind each other.
The delay includes waiting for beat's next dispatcher tick (every 2 s by default, about 1 s on
average), the run, the broker's hop to the channel task, and Apprise's POST.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks._results import figure  # noqa: E402

SPACING_S = 4.0  # between two reminders' slots
LEAD_S = 20.0  # time for the worker and beat to start before the first slot


def receiver() -> tuple[ThreadingHTTPServer, dict[str, float]]:
    """A JSON webhook on 127.0.0.1: the arrival time of each message, by its title."""
    arrivals: dict[str, float] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            at = time.time()
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            arrivals.setdefault(body.get("title") or body.get("message", ""), at)
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, arrivals


def environment(mode: str, data_dir: Path) -> tuple[dict[str, str], str | None]:
    """The processes' environment, and the PostgreSQL database to drop at the end."""
    env = os.environ | {
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "TALORYS_DATA_DIR": str(data_dir),
        "LOG_LEVEL": "WARNING",
    }
    for name in ("DATABASE_URL", "REDIS_URL"):
        env.pop(name, None)
    if mode == "embedded":
        return env, None
    import psycopg
    import redis

    admin = os.environ.get("TALORYS_BENCH_POSTGRES", "postgres://postgres@127.0.0.1:5432/postgres")
    redis_url = os.environ.get("TALORYS_BENCH_REDIS_URL", "redis://127.0.0.1:6379/14")
    redis.Redis.from_url(redis_url).flushdb()
    name = f"talorys_bench_{os.getpid()}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    env |= {"DATABASE_URL": admin.rsplit("/", 1)[0] + f"/{name}", "REDIS_URL": redis_url}
    return env, name


def drop(database: str | None) -> None:
    if database is None:
        return
    import psycopg

    admin = os.environ.get("TALORYS_BENCH_POSTGRES", "postgres://postgres@127.0.0.1:5432/postgres")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=["embedded", "redis"], default="embedded")
    parser.add_argument("--count", type=int, default=5)
    options = parser.parse_args()

    data_dir = Path(tempfile.mkdtemp(prefix="talorys-bench-"))
    env, database = environment(options.mode, data_dir)
    os.environ.update(env)
    server, arrivals = receiver()
    processes: list[subprocess.Popen] = []
    try:
        import django

        django.setup()
        from django.core.management import call_command
        from django.db import connection
        from django.utils import timezone

        from automations.services.crud import automation_create
        from talorys.notifications.channels import channel_create

        call_command("migrate", interactive=False, verbosity=0)
        channel_create(name="Bench", url=f"json://127.0.0.1:{server.server_address[1]}/hook")
        first = timezone.now() + dt.timedelta(seconds=LEAD_S)
        slots = {}
        for i in range(options.count):
            slot = (first + dt.timedelta(seconds=SPACING_S * i)).replace(microsecond=0)
            title = f"Reminder {i}"
            automation_create(
                name=title, kind="reminder", schedule={"type": "once", "at": slot.isoformat()}
            )
            slots[title] = slot.timestamp()
        connection.close()

        celery = [sys.executable, "-m", "celery", "-A", "config"]
        for args in (
            ["worker", "-l", "warning", "--concurrency", "2"],
            ["beat", "-l", "warning", "-s", str(data_dir / "beat-schedule")],
        ):
            log = (data_dir / f"{args[0]}.log").open("wb")
            processes.append(subprocess.Popen([*celery, *args], cwd=ROOT, env=env, stderr=log))

        deadline = time.monotonic() + LEAD_S + SPACING_S * options.count + 60
        while len(arrivals) < options.count and time.monotonic() < deadline:
            if any(p.poll() is not None for p in processes):
                print("a celery process exited; see", data_dir, file=sys.stderr)
                break
            time.sleep(0.1)
        delays = sorted(arrivals[t] - slots[t] for t in slots if t in arrivals)
        database_name = "sqlite" if options.mode == "embedded" else "postgresql"
        print(
            f"channel delivery ({options.mode}: {database_name}"
            f"{', redis' if options.mode == 'redis' else ', file-system broker'}), "
            f"{len(delays)}/{options.count} arrived"
        )
        if not delays:
            return 1
        print("slot -> arrival on the channel, s: " + ", ".join(f"{d:.2f}" for d in delays))
        median = statistics.median(delays)
        print(f"median {median:.2f} s, max {max(delays):.2f} s")
        figure(
            "channel_latency",
            f"reminder slot -> arrival on a local channel ({options.mode}): median",
            median,
            "s",
            floor=1.0,
            floor_name="half of beat's 2 s dispatch interval (the mean wait for the next tick)",
            database=database_name,
        )
        return 0 if len(delays) == options.count else 1
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
        server.shutdown()
        drop(database)
        if os.environ.get("KEEP"):
            print("kept", data_dir)
        else:
            shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
