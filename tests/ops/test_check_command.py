"""`manage.py talorys_check`: the health report for an operator; exit 1 when degraded."""

from __future__ import annotations

import datetime as dt
import io

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from talorys.ops.models import Heartbeat, SetupRun
from talorys.ops.selectors import app_version
from talorys.ops.services import heartbeat_record, setup_run_record

# The embedder process is part of every install's report: up here, unless a test stops it.
pytestmark = pytest.mark.usefixtures("local_embeddings")


def check(*args: str) -> tuple[str, CommandError | None]:
    out = io.StringIO()
    try:
        call_command("talorys_check", *args, stdout=out)
    except CommandError as exc:
        return out.getvalue(), exc
    return out.getvalue(), None


def test_all_well_prints_each_check_and_exits_0(db):
    heartbeat_record(name="worker")
    heartbeat_record(name="beat")
    setup_run_record(kind=SetupRun.Kind.SETUP, started_at=timezone.now(), ok=True)

    out, error = check()

    assert error is None
    lines = out.splitlines()
    assert lines[0] == f"Talorys {app_version()}: ok"
    assert lines[1].split() == ["database", "ok"]
    assert lines[2].split() == ["broker", "embedded"]
    assert lines[3].split() == ["channel", "layer", "embedded"]
    assert lines[4].split()[:2] == ["worker", "ok"]
    assert "last heartbeat 0 s ago" in lines[4]
    assert lines[6].split() == ["embedder", "ok"]
    assert lines[7].split()[:4] == ["setup", "ok:", "setup", "of"]
    assert "->" not in out  # nothing to fix


def test_a_stale_worker_and_no_beat_exit_1_with_what_to_do(db, settings):
    settings.TALORYS_HEARTBEAT_SECONDS = 30
    Heartbeat.objects.create(name="worker", at=timezone.now() - dt.timedelta(minutes=5))

    out, error = check()

    assert error is not None and error.returncode == 1
    assert str(error) == "Talorys is degraded: worker, beat."
    assert out.splitlines()[0].endswith(": degraded")
    worker = next(line for line in out.splitlines() if line.split()[0] == "worker")
    assert "stale (last heartbeat 300 s ago; stale after 90 s)" in worker
    assert "start the worker" in worker
    beat = next(line for line in out.splitlines() if line.split()[0] == "beat")
    assert "unknown (no heartbeat yet)" in beat and "start beat" in beat


def test_a_failed_upgrade_shows_with_how_to_run_it_again(db):
    heartbeat_record(name="worker")
    heartbeat_record(name="beat")
    setup_run_record(
        kind=SetupRun.Kind.UPGRADE, started_at=timezone.now(), ok=False, message="disk full"
    )

    out, error = check()

    assert str(error) == "Talorys is degraded: setup."
    setup = next(line for line in out.splitlines() if line.split()[0] == "setup")
    assert f"failed: upgrade of {app_version()}" in setup
    assert "talorys_setup" in setup


@pytest.mark.parametrize("service", ["worker", "beat"])
def test_one_service_checks_its_heartbeat_only(db, settings, service):
    settings.TALORYS_HEARTBEAT_SECONDS = 30
    heartbeat_record(name=service)  # the other one never beat: not this check's business

    out, error = check("--service", service)

    assert error is None
    assert out.startswith(f"{service}: ok")

    Heartbeat.objects.filter(name=service).update(at=timezone.now() - dt.timedelta(seconds=91))
    out, error = check("--service", service)
    assert error is not None and str(error).startswith(f"{service} is stale")


def test_no_embedder_process_exits_1_with_why_and_what_to_do(db, settings, tmp_path):
    heartbeat_record(name="worker")
    heartbeat_record(name="beat")
    settings.TALORYS_EMBEDDER_URL = f"unix:{tmp_path / 'nothing.sock'}"

    out, error = check()

    assert str(error) == "Talorys is degraded: embedder."
    embedder = next(line for line in out.splitlines() if line.split()[0] == "embedder")
    assert f"unavailable (no answer at unix:{tmp_path / 'nothing.sock'}" in embedder
    assert "talorys_embedder" in embedder and "keyword only" in embedder
