"""``manage.py talorys_run`` as ``make run`` starts it, for the tests that run the whole product
(web, worker, beat, embedder) as processes; and a Celery worker alone."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# One worker process, without the neighbours it would wait a second for.
CELERY_WORKER = [sys.executable, "-m", "celery", "-A", "config", "worker", "-l", "info", "-c", "1"]
CELERY_WORKER += ["--without-mingle", "--without-gossip"]


def celery_process(env: dict[str, str], log: Path) -> subprocess.Popen:
    """CELERY_WORKER in a process group of its own (a kill takes the pool's child, which runs
    the task, too), its output in ``log``."""
    return subprocess.Popen(
        CELERY_WORKER,
        cwd=ROOT,
        env=env,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def kill(process: subprocess.Popen) -> None:
    """SIGKILL to the process group of a process started in one of its own, and wait for it."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(10)


@contextmanager
def celery_worker(env: dict[str, str], log: Path) -> Iterator[subprocess.Popen]:
    """celery_process until the block ends: SIGTERM to its group, SIGKILL after 30 s."""
    process = celery_process(env, log)
    try:
        yield process
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                kill(process)


def run_env(data_dir: Path, port: int, **extra: str) -> dict[str, str]:
    """The environment of a talorys_run of its own: none of the suite's settings."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("TALORYS_", "DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS"))
    }
    return env | {"TALORYS_DATA_DIR": str(data_dir), "PORT": str(port)} | extra


def talorys_run(env: dict[str, str], log: Path | None = None) -> tuple[subprocess.Popen, str]:
    """Start it in a process group of its own (the tests stop it with Ctrl-C to the group) and
    read its output up to "Press Ctrl-C": the process and that output. Stopped if it ends first."""
    run = subprocess.Popen(
        [sys.executable, "manage.py", "talorys_run"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=log.open("w") if log else subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    output = ""
    try:
        while "Press Ctrl-C" not in output:
            line = run.stdout.readline()  # type: ignore[union-attr]
            assert line, f"talorys_run ended early:\n{output}"
            output += line
    except BaseException:
        os.killpg(run.pid, signal.SIGINT)
        run.wait(60)
        raise
    return run, output


def owner_password(output: str) -> str:
    """The password a first run prints once."""
    found = re.search(r"OWNER PASSWORD \(shown once\): (\S+)", output)
    assert found, output
    return found.group(1)
