"""Concurrent chat turns: N SSE turns at once against a real daphne on PostgreSQL.

    .venv/bin/python benchmarks/concurrent_turns.py [--turns 120] [--runs 3] [--stream-seconds 3]
                                                    [--pool-max 10] [--no-pool]

Each run sets up its own throwaway PostgreSQL database (dropped at the end), starts daphne on it
and a fake OpenAI-compatible model server (tests/agent/fake_openai.py) whose every reply streams
slowly, logs in once and fires all turns (``POST /api/chat``) at the same moment. Prints, per run
and as the median of the runs: HTTP status counts (200 / 409 / 503 / 500), how many replies were
saved complete, and the most PostgreSQL connections the server held at once (pg_stat_activity on
the run's database, sampled every 50 ms).

Without the pool (``--no-pool``) each trip of a turn to the database opens its own connection;
with it (the default) the server never holds more than ``--pool-max``.

Needs PostgreSQL (TALORYS_BENCH_POSTGRES, default postgres://postgres@127.0.0.1:5432/postgres).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks._database import free_port  # noqa: E402

PASSWORD = "benchmark passphrase 1"


def setup_database(admin_url: str, db_name: str, data_dir: Path, model_url: str) -> None:
    """Migrate, make the owner, point the owner's settings at the fake model (a subprocess, so
    that this process never holds Django state between runs)."""
    script = (
        "import django; django.setup()\n"
        "from django.core.management import call_command\n"
        "call_command('migrate', interactive=False, verbosity=0)\n"
        "from django.contrib.auth import get_user_model\n"
        f"get_user_model().objects.create_superuser(username='owner', password={PASSWORD!r})\n"
        "from talorys.owner.services.settings import owner_settings_update\n"
        f"owner_settings_update(model_base_url={model_url!r}, model_name='fake',\n"
        "    daily_ai_requests=100000)\n"
    )
    subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=os.environ | bench_env(admin_url, db_name, data_dir),
        check=True,
    )


def bench_env(admin_url: str, db_name: str, data_dir: Path) -> dict[str, str]:
    return {
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": admin_url.rsplit("/", 1)[0] + f"/{db_name}",
        "TALORYS_DATA_DIR": str(data_dir),
        "LOG_LEVEL": "ERROR",
    }


def watch_connections(admin_url: str, db_name: str, stop: threading.Event, peak: list[int]) -> None:
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as conn:
        while not stop.is_set():
            (count,) = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = %s", [db_name]
            ).fetchone()
            peak[0] = max(peak[0], count)
            time.sleep(0.05)


async def fire(url: str, turns: int) -> tuple[collections.Counter[int], float]:
    import httpx

    limits = httpx.Limits(max_connections=turns + 10, max_keepalive_connections=turns + 10)
    async with httpx.AsyncClient(base_url=url, timeout=300, limits=limits) as client:
        login = await client.post(
            "/api/auth/login", json={"username": "owner", "password": PASSWORD}
        )
        login.raise_for_status()
        client.headers["X-CSRFToken"] = login.json()["csrf_token"]

        async def one(n: int) -> int:
            try:
                async with client.stream(
                    "POST", "/api/chat", json={"text": f"Benchmark turn {n}"}
                ) as response:
                    async for _ in response.aiter_lines():
                        pass
                    return response.status_code
            except httpx.HTTPError:
                return 0  # the connection itself failed

        started = time.monotonic()
        statuses = await asyncio.gather(*(one(n) for n in range(turns)))
        return collections.Counter(statuses), time.monotonic() - started


def one_run(options: argparse.Namespace, admin_url: str, run: int) -> dict[str, float]:
    import psycopg

    from tests.agent.fake_openai import FakeOpenAI, Stall, chunk, events

    db_name = f"talorys_bench_turns_{os.getpid()}_{run}"
    data_dir = Path(tempfile.mkdtemp(prefix="talorys-bench-"))
    fake = FakeOpenAI()
    # All turns connect to the model at once: the test server's listen backlog of 5 refused some.
    fake._httpd.socket.listen(options.turns + 10)
    fake.start()
    pieces = 10
    pause = options.stream_seconds / pieces
    reply = [chunk({"role": "assistant", "content": ""})]
    for n in range(pieces):
        reply += [Stall(pause), chunk({"content": f"word{n} "})]
    fake.script(*[events(*reply, chunk(finish_reason="stop")) for _ in range(options.turns)])
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{db_name}"')
    daphne = None
    try:
        setup_database(admin_url, db_name, data_dir, fake.base_url)
        port = free_port()
        env = os.environ | bench_env(admin_url, db_name, data_dir)
        env |= (
            {"TALORYS_DB_POOL": "0"}
            if options.no_pool
            else {"TALORYS_DB_POOL_MAX_SIZE": str(options.pool_max)}
        )
        daphne = subprocess.Popen(
            [
                str(Path(sys.executable).with_name("daphne")),
                "-b",
                "127.0.0.1",
                "-p",
                str(port),
                "config.asgi:application",
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=(data_dir / "daphne.log").open("wb"),
        )
        url = f"http://127.0.0.1:{port}"
        import httpx

        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{url}/api/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if daphne.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError((data_dir / "daphne.log").read_text())
            time.sleep(0.2)

        stop, peak = threading.Event(), [0]
        watcher = threading.Thread(
            target=watch_connections, args=(admin_url, db_name, stop, peak), daemon=True
        )
        watcher.start()
        statuses, seconds = asyncio.run(fire(url, options.turns))
        stop.set()
        watcher.join()

        with psycopg.connect(admin_url.rsplit("/", 1)[0] + f"/{db_name}") as conn:
            rows = conn.execute(
                "SELECT status, count(*) FROM agent_message WHERE role = 'assistant' "
                "GROUP BY status"
            ).fetchall()
            errors = conn.execute(
                "SELECT error_code, count(*) FROM agent_message WHERE status = 'error' "
                "GROUP BY error_code"
            ).fetchall()
        saved = dict(rows)
        result = {
            "200": statuses.get(200, 0),
            "409": statuses.get(409, 0),
            "503": statuses.get(503, 0),
            "500": statuses.get(500, 0),
            "other": sum(n for code, n in statuses.items() if code not in (200, 409, 503, 500)),
            "complete": saved.get("complete", 0),
            "peak_connections": peak[0],
            "seconds": seconds,
        }
        print(
            f"run {run + 1}: " + json.dumps(result | {"saved": saved, "errors": dict(errors)}),
            flush=True,
        )
        return result
    finally:
        if daphne is not None:
            daphne.terminate()
            try:
                daphne.wait(20)
            except subprocess.TimeoutExpired:
                daphne.kill()
        fake.stop()
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{db_name}" WITH (FORCE)')
        shutil.rmtree(data_dir, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=120)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--stream-seconds", type=float, default=3.0, help="each reply's length")
    parser.add_argument("--pool-max", type=int, default=10)
    parser.add_argument("--no-pool", action="store_true", help="TALORYS_DB_POOL=0")
    options = parser.parse_args()
    admin_url = os.environ.get(
        "TALORYS_BENCH_POSTGRES", "postgres://postgres@127.0.0.1:5432/postgres"
    )
    results = [one_run(options, admin_url, run) for run in range(options.runs)]
    median = {key: statistics.median(r[key] for r in results) for key in results[0]}
    pool = "no pool" if options.no_pool else f"pool max {options.pool_max}"
    print(
        f"concurrent turns: {options.turns} SSE turns at once, replies streaming "
        f"{options.stream_seconds:g} s, one daphne on PostgreSQL, {pool}; median of "
        f"{options.runs} runs"
    )
    print(
        f"status: 200 {median['200']:g} / 409 {median['409']:g} / 503 {median['503']:g} / "
        f"500 {median['500']:g} (other {median['other']:g}); saved complete "
        f"{median['complete']:g}; peak PostgreSQL connections {median['peak_connections']:g}; "
        f"{median['seconds']:.1f} s for all turns"
    )
    return 0 if median["500"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
