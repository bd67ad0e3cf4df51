"""The embedded broker's latency: from a task's ``delay()`` to the worker running it, with no
REDIS_URL (SQLite and the broker in a throwaway data dir), one worker process.

    .venv/bin/python benchmarks/broker_latency.py [--broker talorys|kombu] [--count 20] [--rounds 3]

talorys: talorys/ops/broker.py (atomic writes, broken files set aside); kombu: kombu's own
filesystem transport, for comparison. The task is the heartbeat (talorys/ops/tasks.py), which
records when it ran; each is sent after a random pause so sends do not keep step with the
worker's look at the queue (once a second, kombu's polling_interval). Prints each round's
p50/p95/max and the median of the rounds' p50s.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--broker", choices=["talorys", "kombu"], default="talorys")
    parser.add_argument("--count", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    data_dir = Path(tempfile.mkdtemp(prefix="talorys-broker-bench-"))
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env |= {
        "TALORYS_DATA_DIR": str(data_dir),
        "BENCH_BROKER": args.broker,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "TALORYS_OWNER_PASSWORD": "benchmark passphrase of some length",
    }
    os.environ.update(env)
    for name in ("DATABASE_URL", "REDIS_URL"):
        os.environ.pop(name, None)
    subprocess.run(
        [sys.executable, "manage.py", "talorys_setup", "--noinput"],
        cwd=ROOT,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "benchmarks._broker_app", "worker", "-c", "1"]
        + ["-l", "warning", "--without-mingle", "--without-gossip"],
        cwd=ROOT,
        env=env,
        start_new_session=True,
    )
    try:
        p50s = [measure_round(args.count) for _ in range(args.rounds)]
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        worker.wait(30)
        shutil.rmtree(data_dir, ignore_errors=True)
    print(f"{args.broker}: median of the rounds' p50 {statistics.median(p50s) * 1000:.0f} ms")


def measure_round(count: int) -> float:
    from benchmarks._broker_app import app  # noqa: F401  (the transport BENCH_BROKER names)
    from talorys.ops.models import Heartbeat
    from talorys.ops.tasks import heartbeat

    wait_for_run(heartbeat, Heartbeat, timeout=120)  # the worker is up and consuming
    latencies = []
    for _ in range(count):
        time.sleep(random.uniform(0, 1))
        latencies.append(wait_for_run(heartbeat, Heartbeat, timeout=60))
    latencies.sort()
    p50, p95 = statistics.median(latencies), latencies[int(0.95 * (len(latencies) - 1))]
    print(f"  p50 {p50 * 1000:.0f} ms  p95 {p95 * 1000:.0f} ms  max {latencies[-1] * 1000:.0f} ms")
    return p50


def wait_for_run(heartbeat, Heartbeat, timeout: float) -> float:
    """Send one heartbeat; seconds from the send to the worker's record of running it."""
    Heartbeat.objects.filter(name=Heartbeat.Name.WORKER).delete()
    sent = time.time()
    heartbeat.delay()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        row = Heartbeat.objects.filter(name=Heartbeat.Name.WORKER).first()
        if row is not None:
            return row.at.timestamp() - sent
        time.sleep(0.01)
    raise RuntimeError("the worker did not run the task in time")


if __name__ == "__main__":
    main()
