"""The embedded broker (no REDIS_URL, talorys/ops/broker.py) with a real Celery worker: an empty
and a half-written message file in the queue folder are set aside in broken/, the worker keeps
running, and a task sent afterwards runs. kombu's own filesystem transport raised
JSONDecodeError on them and the worker exited."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from talorys.ops.models import Heartbeat
from tests.ops.running import celery_worker
from tests.waiting import wait_for

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.postgres,
    pytest.mark.subprocess,
    pytest.mark.timeout(600),  # for a hang only: each wait below has its own deadline
]

BROKEN = {
    "0_empty.celery.msg": b"",
    "00_cut-short.celery.msg": b'{"body": "eyJ0YXNrIjogImhlYXJ0YmVhdC',
}


@pytest.fixture
def embedded_env(needs_postgres, tmp_path) -> dict[str, str]:
    db = connection.settings_dict
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    url = f"postgres://{db['USER']}{password}@{db['HOST']}:{db['PORT'] or 5432}/{db['NAME']}"
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "TALORYS_DB_POOL")}
    return env | {
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": url,
        "TALORYS_DB_POOL": "0",
        "TALORYS_DATA_DIR": str(tmp_path / "data"),
    }


@pytest.fixture
def worker(embedded_env, tmp_path) -> Iterator[tuple[subprocess.Popen, Path]]:
    log = tmp_path / "worker.log"
    with celery_worker(embedded_env, log) as process:
        yield process, log


def worker_beat_seen() -> bool:
    return Heartbeat.objects.filter(name=Heartbeat.Name.WORKER).exists()


def test_broken_message_files_are_set_aside_and_the_worker_goes_on(worker, embedded_env, tmp_path):
    process, log = worker
    broker = tmp_path / "data" / "broker"
    # The worker's start-up heartbeat went through the broker: it consumes.
    wait_for(worker_beat_seen, "the worker's first heartbeat", alive=process, log=log)
    Heartbeat.objects.all().delete()

    for name, content in BROKEN.items():
        (broker / "queue" / name).write_bytes(content)
    wait_for(
        lambda: all((broker / "broken" / name).exists() for name in BROKEN),
        "the broken files to be set aside",
        alive=process,
        log=log,
    )
    sent = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c"]
        + ["from talorys.ops.tasks import heartbeat; heartbeat.delay()"],
        cwd=settings.BASE_DIR,
        env=embedded_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert sent.returncode == 0, sent.stderr
    wait_for(worker_beat_seen, "a task sent after the broken files", alive=process, log=log)

    assert {name: (broker / "broken" / name).read_bytes() for name in BROKEN} == BROKEN
    assert not [name for name in os.listdir(broker / "queue") if name.endswith(".msg")]
    assert "is not a message: set aside" in log.read_text()
    assert process.poll() is None
    # A broker in a folder has no host, and kombu is not told to "revert to localhost".
    assert "No hostname was supplied" not in log.read_text() + sent.stderr


def test_a_connection_to_the_folder_broker_warns_of_no_missing_host(caplog, tmp_path):
    from kombu import Connection

    options = {"data_folder_in": str(tmp_path), "data_folder_out": str(tmp_path)}
    with caplog.at_level("WARNING", logger="kombu.connection"):
        conn = Connection(
            "filesystem://", transport="talorys.ops.broker:Transport", transport_options=options
        )
        assert conn.info()["hostname"] is None
        conn.release()
    assert [r.getMessage() for r in caplog.records if r.name == "kombu.connection"] == []
