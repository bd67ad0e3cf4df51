"""talorys_run supervises its children (talorys/ops/supervisor.py): a child that
dies is logged and started again after a pause that doubles from 1 s to 30 s (and starts from 1 s
again after it stayed up a minute); the worker killed under a running `talorys_run` comes back
while the web keeps answering, and /api/health shows the owner the restart."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from talorys.ops.supervisor import STABLE_AFTER, Supervisor, processes_read
from tests.ops.running import owner_password, run_env, talorys_run
from tests.reminders import a_reminder_fires
from tests.waiting import wait_for

EXITS_AT_ONCE = [sys.executable, "-c", "raise SystemExit(3)"]
STAYS_UP = [sys.executable, "-c", "import time; time.sleep(600)"]


def test_a_dead_child_is_restarted_after_a_pause_that_doubles_to_30_s(tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger="talorys.ops.supervisor")
    supervisor = Supervisor(
        {"quick": EXITS_AT_ONCE, "steady": STAYS_UP}, data_dir=tmp_path, quiet={"quick", "steady"}
    )
    supervisor.start()
    steady = supervisor.process("steady")
    try:
        now = time.monotonic()
        pauses = []
        for _ in range(7):
            supervisor.process("quick").wait(60)
            supervisor.tick(now)  # it died: restart it after its pause
            restart_at = supervisor.children["quick"].restart_at
            pauses.append(restart_at - now)
            supervisor.tick(restart_at - 0.01)
            assert supervisor.process("quick") is None  # not before its pause is over
            now = restart_at
            supervisor.tick(now)
        # approx: the monotonic clock is a float of its own size (30.000000000000455 once).
        assert pauses == pytest.approx([1, 2, 4, 8, 16, 30, 30])

        # One that stayed up a minute before it died is back after 1 s again.
        supervisor.process("quick").wait(60)
        supervisor.tick(now + STABLE_AFTER)
        assert supervisor.children["quick"].restart_at - (now + STABLE_AFTER) == 1

        state = processes_read(tmp_path)
        assert state["quick"]["status"] == "restarting"
        assert state["quick"]["restarts"] == 7 and state["quick"]["last_exit"]["code"] == 3
        assert state["steady"] == {**state["steady"], "status": "running", "restarts": 0}
        assert state["steady"]["pid"] == steady.pid and steady.poll() is None  # left alone
        assert "quick exited with 3; restarting it in 1 s" in caplog.text
        assert "quick restarted" in caplog.text
    finally:
        supervisor.stop()
    assert steady.poll() is not None
    assert processes_read(tmp_path) is None  # stopped: nothing to show


# --- under a real `talorys_run`: daphne, a Celery worker and beat on the embedded defaults -------


def watch_web(url: str, answers: list[int], done: threading.Event) -> None:
    """Ask /api/health over and over; every answer's status (0: no answer) into ``answers``."""
    with httpx.Client(base_url=url, timeout=10) as client:
        while not done.is_set():
            try:
                answers.append(client.get("/api/health").status_code)
            except httpx.TransportError:
                answers.append(0)
            time.sleep(0.2)


def processes(data_dir: Path) -> dict:
    try:
        return json.loads((data_dir / "processes.json").read_text())["processes"]
    except (OSError, ValueError):
        return {}


@pytest.mark.subprocess
@pytest.mark.timeout(900)  # for a hang only: each wait has its own deadline
def test_the_killed_worker_comes_back_while_the_web_answers(tmp_path, unused_tcp_port):
    data_dir = tmp_path / "data"
    run, output = talorys_run(run_env(data_dir, unused_tcp_port), tmp_path / "run.log")
    url = f"http://127.0.0.1:{unused_tcp_port}"
    answers: list[int] = []
    done = threading.Event()
    try:
        password = owner_password(output)
        first = processes(data_dir)["worker"]["pid"]
        watcher = threading.Thread(target=watch_web, args=(url, answers, done))
        watcher.start()

        os.kill(first, signal.SIGKILL)
        wait_for(
            lambda: (
                processes(data_dir)["worker"]["status"] == "running"
                and processes(data_dir)["worker"]["pid"] != first
            ),
            "the worker's restart",
        )
        check_health_after_restart(url, password)
        check_the_new_worker_runs_a_reminder(url, password)
        done.set()
        watcher.join(30)
        assert run.poll() is None
        assert answers and set(answers) == {200}, "the web stopped answering"
    finally:
        done.set()
        os.killpg(run.pid, signal.SIGINT)
        run.wait(60)
    log = (tmp_path / "run.log").read_text()
    assert "worker exited with -9 (killed by SIGKILL); restarting it in 1 s" in log
    wait_for(
        lambda: not subprocess.run(["pgrep", "-g", str(run.pid)], capture_output=True).stdout,
        "every child to stop on Ctrl-C",
    )


def check_health_after_restart(url: str, password: str) -> None:
    with httpx.Client(base_url=url, timeout=10) as client:
        assert client.get("/api/health").json().keys() == {"status"}  # anyone: the status only
        login = client.post("/api/auth/login", json={"username": "owner", "password": password})
        assert login.status_code == 200
        body = client.get("/api/health").json()
    worker, web = body["processes"]["worker"], body["processes"]["web"]
    assert (worker["status"], worker["restarts"], worker["last_exit"]["code"]) == (
        "running",
        1,
        -9,
    )
    assert (web["status"], web["restarts"], web.get("last_exit")) == ("running", 0, None)


def check_the_new_worker_runs_a_reminder(url: str, password: str) -> None:
    with httpx.Client(base_url=url, timeout=10) as client:
        login = client.post("/api/auth/login", json={"username": "owner", "password": password})
        headers = {"X-CSRFToken": login.json()["csrf_token"]}
        a_reminder_fires(client, headers, what="the restarted worker to fire a reminder")
