"""The stack of benchmarks/reattach.py: a throwaway database (SQLite or PostgreSQL) with the
owner, the fake model server streaming a long slow reply, and one or more daphnes on them,
sharing Redis when given its URL."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from benchmarks._database import create_database, drop_database, free_port, postgres_admin_url
from benchmarks._load_clients import Session
from benchmarks.load import _wait_for, start_daphne

ROOT = Path(__file__).resolve().parent.parent
PASSWORD = "reattach benchmark passphrase"
PIECES = 1000
PAUSE = 0.1  # s before each delta: 10 a second, a reply of 100 s unless cancelled
SETUP = """
import json, django; django.setup()
from django.core.management import call_command
call_command('migrate', interactive=False, verbosity=0)
from django.contrib.auth import get_user_model
get_user_model().objects.create_superuser(username='owner', password={password!r})
from talorys.owner.services.settings import owner_settings_update
owner_settings_update(model_base_url={model_url!r}, model_name='fake', semantic_enabled=False,
    daily_ai_requests=1_000_000, daily_scheduled_ai_requests=1_000_000)
from agent.live.mirror import STREAM_EVENTS
from agent.live.turns import BUFFER_EVENTS, FOLLOWER_QUEUE
print(json.dumps({{'buffer': BUFFER_EVENTS, 'queue': FOLLOWER_QUEUE, 'stream': STREAM_EVENTS}}))
"""


@dataclass
class Stack:
    urls: list[str]  # the daphnes: the turn runs on the first, pages attach on the last
    pids: list[int]
    bounds: dict[str, int]  # BUFFER_EVENTS, FOLLOWER_QUEUE, STREAM_EVENTS as daphne has them
    redis_url: str | None


def _start_model(data_dir: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    model = subprocess.Popen(
        [sys.executable, str(ROOT / "benchmarks/_load_fake.py"), "--port", str(port)]
        + ["--pieces", str(PIECES), "--pause", str(PAUSE)],
        stdout=subprocess.DEVNULL,
        stderr=(data_dir / "model.log").open("wb"),
    )
    return model, f"http://127.0.0.1:{port}/v1"


def _wait_for_model(model: subprocess.Popen, model_url: str, data_dir: Path) -> None:
    import httpx

    # Asked for JSON, the fake answers at once (a streamed reply here takes PIECES * PAUSE).
    ready = {"response_format": {"type": "json_object"}}
    _wait_for(
        lambda: httpx.post(f"{model_url}/chat/completions", json=ready, timeout=1).is_success,
        "the fake model",
        model,
        data_dir / "model.log",
    )


def _set_up(env: dict[str, str], model_url: str) -> dict[str, int]:
    """Migrate, make the owner; the live bounds as daphne will have them."""
    setup = SETUP.format(password=PASSWORD, model_url=model_url)
    done = subprocess.run(
        [sys.executable, "-c", setup], cwd=ROOT, env=env, check=True, capture_output=True
    )
    return json.loads(done.stdout.decode().strip().splitlines()[-1])


@contextmanager
def stack(*, sqlite: bool, redis_url: str | None, daphnes: int) -> Iterator[Stack]:
    """A throwaway database with the owner, the fake model and ``daphnes`` daphnes on them; all
    removed after. On an error the ends of their logs are printed."""
    data_dir = Path(tempfile.mkdtemp(prefix="talorys-reattach-"))
    database_url, db_name = create_database(sqlite, str(data_dir))
    processes: list[subprocess.Popen] = []
    try:
        model, model_url = _start_model(data_dir)
        processes.append(model)
        env = os.environ | {
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DATABASE_URL": database_url,
            "TALORYS_DATA_DIR": str(data_dir),
            "LOG_LEVEL": "ERROR",
        }
        env.pop("REDIS_URL", None)
        if redis_url:
            env["REDIS_URL"] = redis_url
        bounds = _set_up(env, model_url)
        urls = []
        for number in range(daphnes):
            daphne, url = start_daphne(env, data_dir / f"daphne{number}.log")
            processes.append(daphne)
            urls.append(url)
        _wait_for_model(model, model_url, data_dir)
        yield Stack(urls, [p.pid for p in processes[1:]], bounds, redis_url)
    except BaseException:
        for log in sorted(data_dir.glob("*.log")):
            print(f"--- the end of {log.name}:\n{log.read_text()[-3000:]}", file=sys.stderr)
        raise
    finally:
        for process in reversed(processes):
            process.terminate()
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                process.kill()
        if db_name is not None:
            drop_database(db_name)
        shutil.rmtree(data_dir, ignore_errors=True)


def on(session: Session, url: str) -> Session:
    """The same signed-in session, on another daphne of the stack (one database, one Redis)."""
    return dataclasses.replace(session, url=url, port=int(url.rsplit(":", 1)[1]))


def redis_skip(redis_url: str, sqlite: bool) -> str:
    """Why the two-process variant cannot run here, or "" (its Redis database is flushed)."""
    import redis

    if sqlite or postgres_admin_url() is None:
        return "needs PostgreSQL at 127.0.0.1:5432 (two processes on one SQLite file is no setup)"
    try:
        redis.Redis.from_url(redis_url, socket_timeout=2).flushdb()
    except redis.RedisError as error:
        return f"needs Redis at {redis_url}: {error}"
    return ""
