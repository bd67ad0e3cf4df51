"""`make run`'s command: web, worker and beat start together on embedded defaults (SQLite, file
broker, demo model), the generated password logs in, a reminder fires, and Ctrl-C stops all."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.reminders import a_reminder_fires

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.subprocess
def test_run_serves_logs_in_fires_a_reminder_and_stops_on_ctrl_c(tmp_path, unused_tcp_port):
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("TALORYS_", "DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS"))
    }
    env |= {"TALORYS_DATA_DIR": str(tmp_path / "data"), "PORT": str(unused_tcp_port)}
    proc = subprocess.Popen(
        [sys.executable, "manage.py", "talorys_run"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{unused_tcp_port}"
    output = ""
    try:
        while "Press Ctrl-C" not in output:
            line = proc.stdout.readline()
            assert line, f"talorys_run ended early:\n{output}"
            output += line
        password = re.search(r"OWNER PASSWORD \(shown once\): (\S+)", output).group(1)
        assert f"running at {url}/" in output
        assert "Log in as 'owner' with the password printed above" in output

        with httpx.Client(base_url=url, timeout=10) as client:
            assert client.get("/api/health").json()["status"] == "ok"
            assert client.get("/api/tasks").status_code == 401
            login = client.post("/api/auth/login", json={"username": "owner", "password": password})
            assert login.status_code == 200
            headers = {"X-CSRFToken": login.json()["csrf_token"]}
            assert client.get("/api/tasks").status_code == 200
            a_reminder_fires(
                client, headers, what="the worker and beat to fire the reminder", alive=proc
            )
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(timeout=30)
    time.sleep(0.5)
    leftovers = subprocess.run(
        ["pgrep", "-g", str(proc.pid)], capture_output=True, text=True
    ).stdout.split()
    assert leftovers == [], "web, worker or beat survived Ctrl-C"


def test_a_later_start_says_where_the_password_is_and_how_to_reset_it():
    from config.management.commands.talorys_run import login_hint

    again = login_hint("owner", "Talorys 1.0: start done.\n")  # no password printed this time
    assert "printed above" not in again
    assert again == (
        "Log in as 'owner' with the password printed when Talorys first started (or the one in "
        "TALORYS_OWNER_PASSWORD then). Lost it? Run "
        "`.venv/bin/python manage.py talorys_setup --reset-password` for a new one."
    )
    first = login_hint("ana", "done.\nOWNER PASSWORD (shown once): s3cret-words\n")
    assert first == "Log in as 'ana' with the password printed above (shown only this once)."
