"""API throughput: GET /api/tasks?limit=50 with 10,000 tasks through daphne, against a bare
Django view returning the same JSON from the same server.

    .venv/bin/python benchmarks/api_throughput.py [--clients 8] [--seconds 5] [--rounds 3]
                                                  [--sqlite]

Sets up a throwaway database (PostgreSQL at 127.0.0.1:5432 when it answers, else SQLite;
benchmarks/_database.py, dropped at the end) with the owner and 10,000 tasks in 20 projects, and
runs daphne on it with benchmarks/_floor_settings.py: Talorys's settings plus the floor view
``/api/floor/tasks`` (benchmarks/_floor_urls.py), which answers the API's own JSON, computed
once, through the same middleware. The cache is on Redis (REDIS_URL=TALORYS_BENCH_REDIS_URL,
default redis://127.0.0.1:6379/11, flushed: each benchmark has a database of its own) when it
answers, as in production; else in memory. Planner statistics are made after seeding
(benchmarks/_database.py analyze), as autovacuum would have in use.

After checking that both answer the same JSON, ``--clients`` concurrent connections of one
httpx client (the owner's session cookies on both, so the session is read for both) request
one endpoint for ``--seconds``, alternating floor and API rounds, ``--rounds`` of each. Reported
per endpoint: the median requests/s over its rounds, p50 and p95 latency, and the CPU the web
process and this client used (a client near 100% would cap both and flatter the ratio); then
the ratio API / floor and the web process's RSS after. Target: at least 0.5x.

API reads are not throttled (only logins are: talorys/accounts/services.py), so nothing is
raised for the benchmark. Exits 1 when the two answers differ or any request fails.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks._database import create_database, drop_database  # noqa: E402
from benchmarks._load_clients import Session, login, percentile  # noqa: E402
from benchmarks._results import figure  # noqa: E402
from benchmarks.load import rss_mb, start_daphne  # noqa: E402

PASSWORD = "api throughput passphrase"
TASKS = 10_000
PROJECTS = 20
API = "/api/tasks?limit=50"
FLOOR = "/api/floor/tasks"
TARGET_RATIO = 0.5
WARM_UP_SECONDS = 1.0
TICKS = os.sysconf("SC_CLK_TCK")

SETUP = f"""
import datetime as dt
import django
django.setup()
from django.core.management import call_command
from django.contrib.auth import get_user_model
from django.utils import timezone
from talorys.workspace.models import Project, Task
call_command("migrate", interactive=False, verbosity=0)
get_user_model().objects.create_superuser(username="owner", password={PASSWORD!r})
now = timezone.now()
projects = Project.objects.bulk_create(Project(name=f"Project {{n}}") for n in range({PROJECTS}))
# As benchmarks/pages.py seeds them: two in three have a due date, spread around now.
Task.objects.bulk_create(
    (
        Task(
            title=f"Task {{n}}: water the garden beds",
            project=projects[n % {PROJECTS}],
            due_at=now + dt.timedelta(hours=n - {TASKS // 2}) if n % 3 else None,
        )
        for n in range({TASKS})
    ),
    batch_size=1000,
)
from benchmarks._database import analyze
analyze()
"""


@dataclass
class Round:
    path: str
    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)
    statuses: collections.Counter[int] = field(default_factory=collections.Counter)
    server_cpu: float = 0.0  # share of one core, over the round
    client_cpu: float = 0.0

    @property
    def rps(self) -> float:
        return sum(self.statuses.values()) / self.seconds if self.seconds else 0.0


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process so far (/proc/PID/stat, fields 14 and 15)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def redis_for_cache() -> str | None:
    """The Redis URL, flushed, when Redis answers; else None (the cache stays in memory)."""
    import redis

    url = os.environ.get("TALORYS_BENCH_REDIS_URL", "redis://127.0.0.1:6379/11")
    try:
        client = redis.Redis.from_url(url, socket_timeout=2)
        client.flushdb()
    except redis.RedisError:
        return None
    return url


async def one_round(
    session: Session, path: str, *, clients: int, seconds: float, pid: int
) -> Round:
    """``clients`` connections requesting ``path`` one request after another for ``seconds``."""
    result = Round(path)
    async with session.client(connections=clients) as client:
        # Connections opened (and the floor's payload computed) before the clock starts.
        await asyncio.gather(*(client.get(path) for _ in range(clients)))
        until = time.monotonic() + seconds

        async def requester() -> None:
            while time.monotonic() < until:
                began = time.perf_counter()
                try:
                    response = await client.get(path)
                except Exception:
                    result.statuses[0] += 1
                    continue
                result.latencies.append(time.perf_counter() - began)
                result.statuses[response.status_code] += 1

        server, own, started = cpu_seconds(pid), time.process_time(), time.monotonic()
        await asyncio.gather(*(requester() for _ in range(clients)))
        result.seconds = time.monotonic() - started
        result.server_cpu = (cpu_seconds(pid) - server) / result.seconds
        result.client_cpu = (time.process_time() - own) / result.seconds
    return result


async def measure(
    url: str, *, clients: int, seconds: float, rounds: int, pid: int
) -> tuple[list[Round], list[Round], int]:
    """The floor's rounds and the API's, alternating; and the count both answered."""
    session = await login(url, PASSWORD)
    async with session.client(connections=1) as client:
        api, floor = await client.get(API), await client.get(FLOOR)
    if api.status_code != 200 or floor.status_code != 200:
        raise SystemExit(f"API answered {api.status_code}, floor {floor.status_code}")
    # The floor is honest only if it answers what the API answers, byte for byte as JSON.
    if api.json() != floor.json():
        raise SystemExit("the floor view's JSON differs from GET /api/tasks?limit=50")
    if len(api.json()["items"]) != 50 or api.json()["count"] != TASKS:
        raise SystemExit(f"unexpected answer: {api.text[:200]}")
    for path in (FLOOR, API):
        await one_round(session, path, clients=clients, seconds=WARM_UP_SECONDS, pid=pid)
    floors, apis = [], []
    for _ in range(rounds):
        floors.append(await one_round(session, FLOOR, clients=clients, seconds=seconds, pid=pid))
        apis.append(await one_round(session, API, clients=clients, seconds=seconds, pid=pid))
    return floors, apis, api.json()["count"]


@dataclass
class Endpoint:
    name: str
    rounds: list[Round]

    @property
    def rps(self) -> float:
        return statistics.median(r.rps for r in self.rounds)

    @property
    def latencies(self) -> list[float]:
        return [latency for r in self.rounds for latency in r.latencies]

    @property
    def failed(self) -> int:
        return sum(n for r in self.rounds for status, n in r.statuses.items() if status != 200)

    def line(self) -> str:
        per_round = " ".join(f"{r.rps:.0f}" for r in self.rounds)
        cpu = statistics.median(r.server_cpu for r in self.rounds) * 100
        own = statistics.median(r.client_cpu for r in self.rounds) * 100
        return (
            f"  {self.name:32} {self.rps:8.0f} req/s ({per_round}), p50 "
            f"{percentile(self.latencies, 0.5) * 1000:6.1f} ms, p95 "
            f"{percentile(self.latencies, 0.95) * 1000:6.1f} ms, web CPU {cpu:3.0f}%, "
            f"client CPU {own:3.0f}%, failed {self.failed}"
        )


def report(floor: Endpoint, api: Endpoint, *, rss: float, where: str, cache: str) -> None:
    ratio = api.rps / floor.rps if floor.rps else float("nan")
    met = ratio >= TARGET_RATIO
    print(api.line())
    print(floor.line())
    print(
        f"  API / bare view                  {ratio:8.2f} x (target at least {TARGET_RATIO}x: "
        f"{'met' if met else 'MISSES'})"
    )
    print(f"  web RSS after                    {rss:8.1f} MB")
    database = f"{where}+redis" if cache.startswith("redis") else where
    floor_name = "bare Django JSON view, same server"
    figure(
        "api_throughput",
        "GET /api/tasks?limit=50 requests/s",
        api.rps,
        "req/s",
        floor=floor.rps,
        floor_name=floor_name,
        target=None,
        better="higher",
        database=database,
    )
    figure(
        "api_throughput",
        "API / bare view",
        ratio,
        "x",
        target=TARGET_RATIO,
        better="higher",
        database=database,
    )
    figure(
        "api_throughput",
        "GET /api/tasks?limit=50 p50 latency",
        percentile(api.latencies, 0.5) * 1000,
        "ms",
        floor=percentile(floor.latencies, 0.5) * 1000,
        floor_name=floor_name,
        database=database,
    )
    figure(
        "api_throughput",
        "bare Django JSON view p50 latency",
        percentile(floor.latencies, 0.5) * 1000,
        "ms",
        database=database,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=8, help="concurrent connections")
    parser.add_argument("--seconds", type=float, default=5, help="length of each round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of each endpoint")
    parser.add_argument("--sqlite", action="store_true", help="use SQLite even if PostgreSQL is up")
    options = parser.parse_args()

    data_dir = Path(tempfile.mkdtemp(prefix="talorys-api-"))
    database_url, pg_name = create_database(options.sqlite, str(data_dir))
    daphne: subprocess.Popen | None = None
    try:
        redis_url = redis_for_cache()
        env = os.environ | {
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DATABASE_URL": database_url,
            "TALORYS_DATA_DIR": str(data_dir),
            "TALORYS_MODEL_BASE_URL": "",
            "LOG_LEVEL": "ERROR",
        }
        env.pop("DEBUG", None)  # DEBUG keeps every query in memory: not what production runs
        env.pop("REDIS_URL", None)
        if redis_url:
            env["REDIS_URL"] = redis_url
        subprocess.run([sys.executable, "-c", SETUP], cwd=ROOT, env=env, check=True)
        env["DJANGO_SETTINGS_MODULE"] = "benchmarks._floor_settings"
        daphne, url = start_daphne(env, data_dir / "daphne.log")
        where = "sqlite" if pg_name is None else "postgresql"
        cache = redis_url or "in memory (Redis did not answer)"
        print(
            f"api_throughput: {TASKS:,} tasks in {PROJECTS} projects on {where}"
            f"{' (PostgreSQL did not answer)' if pg_name is None and not options.sqlite else ''}"
            f", cache {cache}; daphne, {options.clients} connections, {options.rounds} rounds "
            f"of {options.seconds:g} s each, floor and API alternating"
        )
        floors, apis, count = asyncio.run(
            measure(
                url,
                clients=options.clients,
                seconds=options.seconds,
                rounds=options.rounds,
                pid=daphne.pid,
            )
        )
        print(f"  both answer the same JSON: 50 items of {count:,}")
        floor = Endpoint(f"floor GET {FLOOR}", floors)
        api = Endpoint(f"API GET {API}", apis)
        report(floor, api, rss=rss_mb(daphne.pid), where=where, cache=cache)
        return 1 if floor.failed or api.failed else 0
    finally:
        if daphne is not None:
            daphne.terminate()
            try:
                daphne.wait(20)
            except subprocess.TimeoutExpired:
                daphne.kill()
        if pg_name:
            drop_database(pg_name)
        shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
