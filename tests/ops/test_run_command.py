"""`make run`'s command: web, worker and beat start together on embedded defaults (SQLite, file
broker, demo model), the generated password logs in, a reminder fires, and Ctrl-C stops all."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import httpx
import pytest

from tests.ops.running import owner_password, run_env, talorys_run
from tests.reminders import a_reminder_fires


@pytest.mark.subprocess
def test_run_serves_logs_in_fires_a_reminder_and_stops_on_ctrl_c(tmp_path, unused_tcp_port):
    proc, output = talorys_run(run_env(tmp_path / "data", unused_tcp_port))
    url = f"http://127.0.0.1:{unused_tcp_port}"
    try:
        password = owner_password(output)
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
