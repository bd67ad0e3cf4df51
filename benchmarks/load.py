"""Load: concurrent chat turns over the WebSocket plus API CRUD against a live daphne on
PostgreSQL and Redis, then a burst of turns at once.

    .venv/bin/python benchmarks/load.py [--seconds 60] [--turns 50] [--crud 10] [--burst 200]
                                        [--soak-minutes N] [--pieces 5] [--pause 0.05]
                                        [--web-processes N]

Sets up a throwaway PostgreSQL database (benchmarks/_database.py, dropped at the end), the owner
with generous budgets, a fake model server in its own process (benchmarks/_load_fake.py: each
reply streams ``--pieces`` pieces, ``--pause`` s before each) and ``--web-processes`` daphnes
sharing one port as in production (talorys/ops/web.py; by default production's count with Redis:
TALORYS_WEB_PROCESSES, else the CPU count) with REDIS_URL=TALORYS_BENCH_REDIS_URL (default
redis://127.0.0.1:6379/13, flushed), so the channel layer and the cache are on Redis as in
production. The embedder process runs beside them as talorys_run runs it (one per install, on
the data dir's socket; semantic recall is on, as in a default install; ``--keyword-recall``
turns it off and starts no embedder). The RSS figures are the largest web process's and the
embedder's; CPU per turn is the web processes' (and the embedder's) user + system time over the
load phase divided by the turns completed in it.

Load phase (``--seconds``): ``--turns`` WebSocket clients, each sending turns in a conversation of
its own, one after another, and ``--crud`` clients making, listing, changing and deleting tasks
and notes. Burst phase: ``--burst`` turns at once, each on a socket of its own, while another
client lists tasks. Then the database is checked against what the clients saw. ``--soak-minutes``
runs the load phase that long instead, and prints the web process's RSS, open files and
PostgreSQL connections every minute (``--sample-seconds``); growth from the first minute's sample
to the last (RSS by more than a quarter, files or connections by more than 10) fails it.

Exits 1 on any error in the load phase, anything lost or duplicated, a burst turn neither
completed nor refused cleanly (a 500, an INTERNAL error, a dropped socket), a probe request
that failed, or (soak) growth.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks._database import (  # noqa: E402
    create_database,
    drop_database,
    free_port,
    postgres_admin_url,
)
from benchmarks._load_clients import (  # noqa: E402
    Burst,
    Load,
    burst_phase,
    check_database,
    load_phase,
    login,
    percentile,
)
from benchmarks._results import figure  # noqa: E402
from talorys.ops.web import web_process_count  # noqa: E402

PASSWORD = "load benchmark passphrase"
# Soak: what counts as growth between the first minute's sample (after warm-up) and the last.
RSS_GROWTH = 1.25
COUNT_GROWTH = 10


@dataclass
class Stack:
    url: str
    pids: list[int]  # the web (daphne) processes
    conninfo: str  # its database
    db_name: str
    model_url: str
    embedder_pid: int | None = None


def cpu_seconds(pid: int) -> float:
    """A process's user + system CPU time so far (/proc/<pid>/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _wait_for(check, what: str, process: subprocess.Popen, log: Path, seconds: float = 30) -> None:
    import httpx

    deadline = time.monotonic() + seconds
    while True:
        try:
            if check():
                return
        except httpx.TransportError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not start:\n{log.read_text()}")
        time.sleep(0.1)


def _wait_for_embedder(socket: Path, seconds: float = 120) -> None:
    """Until the embedder answers on ``socket`` (its first start optimises the model)."""
    import httpx

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            transport = httpx.HTTPTransport(uds=str(socket))
            with httpx.Client(transport=transport, timeout=5) as client:
                if client.get("http://embedder/health").status_code == 200:
                    return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise RuntimeError("the embedder did not answer (its errors are above)")


def start_daphne(env: dict[str, str], log: Path) -> tuple[subprocess.Popen, str]:
    """daphne on a free port with ``env``, its errors in ``log``, once /api/health answers 200:
    the process and its URL. The caller stops it."""
    import httpx

    port = free_port()
    daphne = subprocess.Popen(
        [str(Path(sys.executable).with_name("daphne")), "-b", "127.0.0.1", "-p", str(port)]
        + ["config.asgi:application"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=log.open("wb"),
    )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_for(
            lambda: httpx.get(f"{url}/api/health", timeout=1).status_code == 200,
            "daphne",
            daphne,
            log,
        )
    except RuntimeError:
        daphne.kill()
        raise
    return daphne, url


def start_web(
    stack: ExitStack, env: dict[str, str], data_dir: Path, count: int, *, embedder: bool = True
) -> tuple[str, list[int], int | None]:
    """``count`` daphnes on one free port of 127.0.0.1 as talorys_web runs them
    (talorys/ops/web.py), and the embedder beside them as talorys_run runs it, stopped when
    ``stack`` closes, once /api/health answers 200: the URL, the webs' pids, the embedder's."""
    import httpx

    from talorys.ops.web import wait_until_listening, web_serving

    others = {}
    if embedder:
        socket = data_dir / "embedder.sock"
        others["embedder"] = [sys.executable, "-m", "talorys.embedder", "--socket", str(socket)]
        others["embedder"] += ["--cache-dir", str(data_dir / "embedder")]
    supervisor, web = stack.enter_context(
        web_serving(
            "127.0.0.1", 0, count, others=others, data_dir=data_dir, quiet_web=True, env=env
        )
    )
    port = web.listening.getsockname()[1]
    wait_until_listening("127.0.0.1", port, supervisor, lambda: False, timeout=60)
    url = f"http://127.0.0.1:{port}"
    if httpx.get(f"{url}/api/health", timeout=10).status_code != 200:
        raise RuntimeError("the web processes did not start (their errors are above)")
    if embedder:
        _wait_for_embedder(data_dir / "embedder.sock")
    children = {name: c.process.pid for name, c in supervisor.children.items() if c.process}
    embedder_pid = children.pop("embedder", None)
    return url, list(children.values()), embedder_pid


@contextmanager
def live_stack(
    redis_url: str, *, pieces: int, pause: float, web_processes: int = 1, semantic: bool = True
) -> Iterator[Stack]:
    """A throwaway database with the owner, the fake model and ``web_processes`` daphnes on
    them, arranged as in production (one listening socket, supervised: talorys/ops/web.py);
    all removed after."""
    import httpx
    import redis

    data_dir = Path(tempfile.mkdtemp(prefix="talorys-load-"))
    database_url, db_name = create_database(False, str(data_dir))
    if db_name is None:
        raise SystemExit("benchmarks/load.py needs PostgreSQL at 127.0.0.1:5432")
    redis.Redis.from_url(redis_url).flushdb()
    processes: list[subprocess.Popen] = []
    webs = ExitStack()
    try:
        model_port = free_port()
        model_log = data_dir / "model.log"
        model = subprocess.Popen(
            [sys.executable, str(ROOT / "benchmarks/_load_fake.py"), "--port", str(model_port)]
            + ["--pieces", str(pieces), "--pause", str(pause)],
            stdout=subprocess.DEVNULL,
            stderr=model_log.open("wb"),
        )
        processes.append(model)
        model_url = f"http://127.0.0.1:{model_port}/v1"
        env = os.environ | {
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DATABASE_URL": database_url,
            "TALORYS_DATA_DIR": str(data_dir),
            "REDIS_URL": redis_url,
            "LOG_LEVEL": os.environ.get("TALORYS_BENCH_LOG_LEVEL", "ERROR"),
        }
        setup = (
            "import django; django.setup()\n"
            "from django.core.management import call_command\n"
            "call_command('migrate', interactive=False, verbosity=0)\n"
            "from django.contrib.auth import get_user_model\n"
            f"get_user_model().objects.create_superuser(username='owner', password={PASSWORD!r})\n"
            "from talorys.owner.services.settings import owner_settings_update\n"
            # Budgets far beyond what the load spends: a refusal here would be no finding.
            f"owner_settings_update(model_base_url={model_url!r}, model_name='fake',\n"
            "    daily_ai_requests=1_000_000, daily_scheduled_ai_requests=1_000_000,\n"
            f"    semantic_enabled={semantic!r})\n"
        )
        subprocess.run([sys.executable, "-c", setup], cwd=ROOT, env=env, check=True)
        url, pids, embedder_pid = start_web(
            webs, env | {"PYTHONPATH": str(ROOT)}, data_dir, web_processes, embedder=semantic
        )
        _wait_for(
            lambda: httpx.post(f"{model_url}/chat/completions", json={}, timeout=1).is_success,
            "the fake model",
            model,
            model_log,
        )
        yield Stack(url, pids, database_url, db_name, model_url, embedder_pid)
    finally:
        webs.close()
        for process in reversed(processes):
            process.terminate()
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                process.kill()
        drop_database(db_name)
        shutil.rmtree(data_dir, ignore_errors=True)


def model_first_chunk(model_url: str, count: int = 5) -> list[float]:
    """Seconds to the first piece of text, asking the fake model directly: what a turn's time
    to first text is compared with."""
    import httpx

    body = {"model": "fake", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    times = []
    with httpx.Client(timeout=30) as client:
        for _ in range(count):
            started = time.monotonic()
            with client.stream("POST", f"{model_url}/chat/completions", json=body) as response:
                for line in response.iter_lines():
                    if '"content": "' in line and '"content": ""' not in line:
                        times.append(time.monotonic() - started)
                        break
    return times


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def web_rss_mb(stack: Stack) -> float:
    """The largest web process's RSS: what the per-process target is about."""
    return max(rss_mb(pid) for pid in stack.pids)


def open_files(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def database_connections(db_name: str) -> int:
    import psycopg

    with psycopg.connect(postgres_admin_url() or "", autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = %s", [db_name]
        ).fetchone()
    return int(row[0]) if row else 0


@dataclass
class Report:
    seconds: float
    load: Load
    burst: Burst | None
    model_first_chunk: list[float]
    rss: dict[str, float] = field(default_factory=dict)  # MB, by moment
    lost: list[str] = field(default_factory=list)  # the database check's problems
    samples: list[tuple[float, float, int, int]] = field(default_factory=list)  # soak
    grew: list[str] = field(default_factory=list)
    cpu: dict[str, float] = field(default_factory=dict)  # CPU seconds in the load phase, by part
    embedder_rss: float | None = None  # MB, after the load phase

    @property
    def failures(self) -> list[str]:
        found = [f"load: {error}" for error in self.load.errors]
        found += [f"lost or duplicated: {problem}" for problem in self.lost]
        if self.burst is not None:
            found += [f"burst: {t.text}: {t.outcome}" for t in self.burst.turns if not t.clean]
            found += [f"probe: {problem}" for problem in self.burst.probe.unexpected]
        return found + [f"soak: {what}" for what in self.grew]


def measure(
    stack: Stack,
    *,
    seconds: float,
    turns: int,
    crud: int,
    burst: int,
    pieces: int,
    soak_minutes: float = 0,
    sample_seconds: float = 60,
    probes: int = 5,
) -> Report:
    first_chunk = model_first_chunk(stack.model_url, probes)
    session = asyncio.run(login(stack.url, PASSWORD))
    rss = {"before": web_rss_mb(stack)}
    samples: list[tuple[float, float, int, int]] = []
    started = time.monotonic()

    def sample() -> None:
        row = (
            (time.monotonic() - started) / 60,
            web_rss_mb(stack),
            sum(open_files(pid) for pid in stack.pids),
            database_connections(stack.db_name),
        )
        samples.append(row)
        print(
            f"  minute {row[0]:5.1f}: RSS {row[1]:7.1f} MB, open files {row[2]:4d}, "
            f"PostgreSQL connections {row[3]:3d}",
            flush=True,
        )

    if soak_minutes:
        sample()
        seconds = soak_minutes * 60
    cpu_before = _cpu(stack)
    load = asyncio.run(
        load_phase(
            session,
            seconds=seconds,
            turns=turns,
            crud=crud,
            pieces=pieces,
            every=sample_seconds if soak_minutes else None,
            sample=sample if soak_minutes else None,
        )
    )
    rss["after load"] = web_rss_mb(stack)
    cpu = {part: seconds - cpu_before[part] for part, seconds in _cpu(stack).items()}
    embedder_rss = rss_mb(stack.embedder_pid) if stack.embedder_pid else None
    bursted = asyncio.run(burst_phase(session, count=burst, pieces=pieces)) if burst else None
    rss["after burst"] = web_rss_mb(stack)
    turns_seen = load.turns + (bursted.turns if bursted else [])
    report = Report(seconds, load, bursted, first_chunk, rss, samples=samples, cpu=cpu)
    report.embedder_rss = embedder_rss
    report.lost = check_database(stack.conninfo, turns_seen, pieces)
    if soak_minutes:
        sample()
        report.grew = growth(samples)
    return report


def _cpu(stack: Stack) -> dict[str, float]:
    """CPU seconds so far: the web processes' together, and the embedder's."""
    parts = {"web": sum(cpu_seconds(pid) for pid in stack.pids)}
    if stack.embedder_pid:
        parts["embedder"] = cpu_seconds(stack.embedder_pid)
    return parts


def cpu_per_turn(report: Report) -> dict[str, float]:
    """Milliseconds of CPU per turn completed in the load phase, by part."""
    complete = sum(t.outcome == "complete" for t in report.load.turns)
    return {part: seconds * 1000 / max(complete, 1) for part, seconds in report.cpu.items()}


def growth(samples: list[tuple[float, float, int, int]]) -> list[str]:
    """Growth from the first minute's sample (the process warmed up) to the last."""
    if len(samples) < 3:
        return []
    first, last = samples[1], samples[-1]
    found = []
    if last[1] > first[1] * RSS_GROWTH:
        found.append(f"RSS {first[1]:.1f} -> {last[1]:.1f} MB")
    for index, what in ((2, "open files"), (3, "PostgreSQL connections")):
        if last[index] > first[index] + COUNT_GROWTH:
            found.append(f"{what} {first[index]} -> {last[index]}")
    return found


def summary(
    report: Report, *, turns: int, crud: int, pieces: int, pause: float, web_processes: int = 1
) -> str:
    load = report.load
    ttft = [t.first_text for t in load.turns if t.first_text is not None]
    direct = sorted(report.model_first_chunk)
    base = direct[len(direct) // 2] if direct else float("nan")
    complete = sum(t.outcome == "complete" for t in load.turns)
    crud_calls = load.crud
    lines = [
        f"load: {turns} WebSocket chat clients + {crud} API CRUD clients for "
        f"{report.seconds:g} s; {web_processes} daphne process(es) on PostgreSQL and Redis; "
        "fake model streaming "
        f"{pieces} pieces, {pause * 1000:g} ms before each",
        f"  chat turns            {len(load.turns):6d} sent, {complete} complete, "
        f"{len(load.turns) - complete} not ({len(load.socket_failures)} socket failures)",
        f"  API requests          {sum(crud_calls.statuses.values()):6d}, statuses "
        f"{dict(sorted(crud_calls.statuses.items()))}, p50 "
        f"{percentile(crud_calls.latencies, 0.5) * 1000:.0f} ms, p95 "
        f"{percentile(crud_calls.latencies, 0.95) * 1000:.0f} ms",
        f"  time to first text    p50 {percentile(ttft, 0.5) * 1000:6.0f} ms, p95 "
        f"{percentile(ttft, 0.95) * 1000:6.0f} ms (the model's own first piece: "
        f"{base * 1000:.0f} ms)",
        f"  overhead over model   p50 {(percentile(ttft, 0.5) - base) * 1000:6.0f} ms, p95 "
        f"{(percentile(ttft, 0.95) - base) * 1000:6.0f} ms",
        "  web RSS (largest)     "
        + ", ".join(f"{moment} {mb:.1f} MB" for moment, mb in report.rss.items()),
        "  embedder RSS          "
        + (f"{report.embedder_rss:.1f} MB after load" if report.embedder_rss else "(none)"),
        "  CPU per complete turn "
        + ", ".join(f"{part} {ms:.1f} ms" for part, ms in cpu_per_turn(report).items()),
        f"  errors                {len(load.errors):6d}",
    ]
    lines += [f"    {error}" for error in load.errors[:10]]
    if report.burst is not None:
        burst = report.burst
        probe = burst.probe
        outcomes = ", ".join(f"{what} {n}" for what, n in burst.outcomes.most_common())
        lines += [
            f"burst: {len(burst.turns)} turns at once, over in {burst.seconds:.1f} s",
            f"  outcomes              {outcomes}",
            f"  not clean             {sum(not t.clean for t in burst.turns):6d} (500s: "
            f"{sum(t.is_500 for t in burst.turns)})",
            f"  GET /api/tasks meanwhile: {len(probe.latencies)} answered, "
            f"{len(probe.unexpected)} failed, p50 {percentile(probe.latencies, 0.5) * 1000:.0f} "
            f"ms, max {max(probe.latencies, default=float('nan')) * 1000:.0f} ms",
        ]
    lines.append(f"database check: {len(report.lost)} lost or duplicated")
    lines += [f"    {problem}" for problem in report.lost[:10]]
    if report.samples:
        lines.append("soak: " + ("grew: " + "; ".join(report.grew) if report.grew else "no growth"))
    lines.append("PASS" if not report.failures else f"FAIL ({len(report.failures)} problems)")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--turns", type=int, default=50, help="concurrent chat clients")
    parser.add_argument("--crud", type=int, default=10, help="concurrent API CRUD clients")
    parser.add_argument("--burst", type=int, default=200, help="turns at once; 0: no burst")
    parser.add_argument("--soak-minutes", type=float, default=0)
    parser.add_argument("--sample-seconds", type=float, default=60, help="soak: sample interval")
    parser.add_argument("--pieces", type=int, default=5, help="pieces in each model reply")
    parser.add_argument("--pause", type=float, default=0.05, help="seconds before each piece")
    parser.add_argument(
        "--keyword-recall", action="store_true", help="semantic recall off, no embedder process"
    )
    parser.add_argument(
        "--web-processes",
        type=int,
        default=None,
        help="daphnes sharing the port (default: production's rule with Redis, the CPU count, "
        "or TALORYS_WEB_PROCESSES)",
    )
    options = parser.parse_args()
    redis_url = os.environ.get("TALORYS_BENCH_REDIS_URL", "redis://127.0.0.1:6379/13")
    web_processes = options.web_processes
    if web_processes is None:
        web_processes = web_process_count(redis_url)
    elif web_processes < 1:
        parser.error("--web-processes must be 1 or more")
    with live_stack(
        redis_url,
        pieces=options.pieces,
        pause=options.pause,
        web_processes=web_processes,
        semantic=not options.keyword_recall,
    ) as stack:
        report = measure(
            stack,
            seconds=options.seconds,
            turns=options.turns,
            crud=options.crud,
            burst=options.burst,
            pieces=options.pieces,
            soak_minutes=options.soak_minutes,
            sample_seconds=options.sample_seconds,
        )
    print(
        summary(
            report,
            turns=options.turns,
            crud=options.crud,
            pieces=options.pieces,
            pause=options.pause,
            web_processes=web_processes,
        )
    )
    _figures(report, turns=options.turns)
    return 1 if report.failures else 0


def _figures(report: Report, *, turns: int) -> None:
    """The load's figures for `make bench` (benchmarks/_results.py)."""
    ttft = [t.first_text for t in report.load.turns if t.first_text is not None]
    direct = sorted(report.model_first_chunk)
    base = direct[len(direct) // 2] if direct else None
    where = "postgresql+redis"
    figure(
        "load",
        f"time to first text under load ({turns} turns + API clients), p95",
        percentile(ttft, 0.95) * 1000,
        "ms",
        floor=None if base is None else base * 1000,
        floor_name="the fake model's own first piece, asked directly",
        target=1500.0,
        database=where,
    )
    complete = sum(t.outcome == "complete" for t in report.load.turns)
    figure("load", "chat turns completed in the load phase", complete, "", better="higher")
    for part, ms in cpu_per_turn(report).items():
        figure("load", f"{part} CPU per completed turn", ms, "ms", database=where)
    if report.embedder_rss is not None:
        figure("load", "embedder RSS after load", report.embedder_rss, "MB", target=200.0)
    for moment, mb in report.rss.items():
        target = 180.0 if moment == "after load" else None
        figure("load", f"web process RSS {moment}", mb, "MB", target=target, database=where)
    figure(
        "load",
        "errors, lost or duplicated messages",
        len(report.failures),
        "",
        target=0,
        database=where,
    )


if __name__ == "__main__":
    sys.exit(main())
