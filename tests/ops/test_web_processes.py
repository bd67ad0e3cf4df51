"""TALORYS_WEB_PROCESSES (talorys/ops/web.py): with Redis, talorys_run serves one port from
several daphnes sharing the socket it bound; a killed one comes back while the others keep the
port answering. Without Redis more than one is refused before anything starts, and so is a value
that is not a whole number of at least 1."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from talorys.ops.supervisor import Supervisor
from talorys.ops.web import WebStartError, web_process_count, web_processes
from tests.conftest import _database_url
from tests.ops.running import owner_password, run_env, talorys_run
from tests.ops.test_supervisor import processes
from tests.waiting import wait_for

ROOT = Path(__file__).resolve().parents[2]
REDIS = "redis://127.0.0.1:6379/0"  # only whether it is set matters to the count


# --- the count -----------------------------------------------------------------------------------


def test_the_default_is_one_process_per_cpu_with_redis_and_one_without(monkeypatch):
    monkeypatch.delenv("TALORYS_WEB_PROCESSES", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 4)
    assert web_process_count(REDIS) == 4
    assert web_process_count("") == 1
    monkeypatch.setattr(os, "cpu_count", lambda: None)  # unknown: one
    assert web_process_count(REDIS) == 1
    monkeypatch.setenv("TALORYS_WEB_PROCESSES", "3")
    assert web_process_count(REDIS) == 3
    monkeypatch.setenv("TALORYS_WEB_PROCESSES", "1")
    assert web_process_count("") == 1  # one is what runs without Redis anyway


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("two", "TALORYS_WEB_PROCESSES must be a whole number, got 'two'"),
        ("1.5", "TALORYS_WEB_PROCESSES must be a whole number, got '1.5'"),
        ("0", "TALORYS_WEB_PROCESSES must be 1 or more, got 0"),
        ("-2", "TALORYS_WEB_PROCESSES must be 1 or more, got -2"),
    ],
)
def test_a_value_that_is_not_a_count_is_refused(monkeypatch, value, message):
    monkeypatch.setenv("TALORYS_WEB_PROCESSES", value)
    with pytest.raises(WebStartError) as refused:
        web_process_count(REDIS)
    assert str(refused.value) == message


def test_a_port_in_use_is_a_clear_error():
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        with pytest.raises(WebStartError) as refused:
            web_processes("127.0.0.1", port, 2)
    assert str(refused.value).startswith(f"cannot listen on 127.0.0.1:{port}: ")
    assert "in use" in str(refused.value)


def test_only_the_web_processes_get_the_listening_socket(tmp_path):
    """The socket is handed to each daphne (``pass_fds``), and to nothing else the supervisor
    runs: a worker holding it would keep the port open after every daphne died."""
    web = web_processes("127.0.0.1", 0, 2)
    fd = web.listening.fileno()
    holds = [sys.executable, "-c", f"import os; os.fstat({fd})"]  # exits 1 when it has no fd
    supervisor = Supervisor(
        {name: holds for name in [*web.commands, "worker"]},
        data_dir=tmp_path,
        quiet=set(),
        pass_fds=web.pass_fds,
    )
    try:
        supervisor.start()
        codes = {name: supervisor.process(name).wait(60) for name in supervisor.children}
    finally:
        supervisor.stop()
        web.close()
    assert codes == {"web-1": 0, "web-2": 0, "worker": 1}
    assert all(command[1:3] == ["--fd", str(fd)] for command in web.commands.values())


# --- under a real talorys_run / talorys_web ------------------------------------------------------


@pytest.mark.subprocess
@pytest.mark.parametrize("command", ["talorys_run", "talorys_web"])
@pytest.mark.parametrize(
    ("value", "says"),
    [("2", "TALORYS_WEB_PROCESSES=2 needs Redis (REDIS_URL)"), ("none", "a whole number")],
)
def test_a_refused_count_starts_nothing(tmp_path, unused_tcp_port, command, value, says):
    data_dir = tmp_path / "data"
    env = run_env(data_dir, unused_tcp_port, TALORYS_WEB_PROCESSES=value)
    done = subprocess.run(
        [sys.executable, "manage.py", command],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    assert says in done.stderr and "Traceback" not in done.stderr
    # Nothing set up (no database made, no owner) and nothing supervised.
    assert not (data_dir / "talorys.sqlite3").exists()
    assert not (data_dir / "processes.json").exists()
    assert "OWNER PASSWORD" not in done.stdout


def served_by(url: str, cookies: httpx.Cookies) -> int:
    """The pid of the web process that answered the owner's /api/health, on a new connection
    (each new connection may be accepted by any of the processes)."""
    with httpx.Client(base_url=url, cookies=cookies, timeout=10) as client:
        return client.get("/api/health").json()["served_by"]


def dead(pid: int) -> bool:
    """Whether ``pid`` has exited (a zombie until the supervisor reaps it: its sockets are
    closed all the same)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def both_answer(url: str, cookies: httpx.Cookies, pids: set[int]) -> None:
    """Wait until each of ``pids`` has answered a request to the one port."""
    seen: set[int] = set()

    def another() -> bool:
        pid = served_by(url, cookies)
        assert pid in pids, f"{pid} is not one of the web processes {pids}"
        seen.add(pid)
        return seen == pids

    wait_for(another, f"each of {pids} to answer")


@pytest.mark.subprocess
@pytest.mark.postgres
@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
@pytest.mark.timeout(900)  # for a hang only: each wait has its own deadline
def test_two_web_processes_share_the_port_and_a_killed_one_comes_back(
    needs_postgres, redis_url_for_tests, tmp_path, unused_tcp_port
):
    data_dir = tmp_path / "data"
    env = run_env(
        data_dir,
        unused_tcp_port,
        DATABASE_URL=_database_url(),
        REDIS_URL=redis_url_for_tests,
        TALORYS_WEB_PROCESSES="2",
    )
    run, output = talorys_run(env, tmp_path / "run.log")
    url = f"http://127.0.0.1:{unused_tcp_port}"
    try:
        assert f"running at {url}/ (2 web processes)" in output
        password = owner_password(output)
        assert set(processes(data_dir)) == {"web-1", "web-2", "worker", "beat", "embedder"}
        webs = {name: processes(data_dir)[name]["pid"] for name in ("web-1", "web-2")}

        with httpx.Client(base_url=url, timeout=10) as client:
            login = client.post("/api/auth/login", json={"username": "owner", "password": password})
            assert login.status_code == 200
            body = client.get("/api/health").json()
            cookies = client.cookies
        assert body["status"] == "ok", body  # Redis, the channel layer, worker and beat too
        assert {body["processes"][name]["pid"] for name in webs} == set(webs.values())
        both_answer(url, cookies, set(webs.values()))

        # Killed: every request from then on, each on a new connection, is answered (by
        # web-2, or by web-1 once it is back); none is left unanswered while web-1 is down.
        os.kill(webs["web-1"], signal.SIGKILL)
        wait_for(lambda: dead(webs["web-1"]), "web-1 to die")
        answered: list[int] = []

        def back() -> bool:
            answered.append(served_by(url, cookies))  # no answer: an error, the test fails
            state = processes(data_dir)["web-1"]
            return state["status"] == "running" and state["pid"] != webs["web-1"]

        wait_for(back, "web-1's restart", alive=run)
        assert webs["web-1"] not in answered and webs["web-2"] in answered
        state = processes(data_dir)["web-1"]
        assert (state["restarts"], state["last_exit"]["code"]) == (1, -9)
        assert processes(data_dir)["web-2"]["pid"] == webs["web-2"]  # left alone
        both_answer(url, cookies, {state["pid"], webs["web-2"]})
    finally:
        os.killpg(run.pid, signal.SIGINT)
        run.wait(60)
    assert "web-1 exited with -9 (killed by SIGKILL)" in (tmp_path / "run.log").read_text()
    wait_for(
        lambda: not subprocess.run(["pgrep", "-g", str(run.pid)], capture_output=True).stdout,
        "every child to stop on Ctrl-C",
    )


@pytest.mark.subprocess
@pytest.mark.postgres
@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_talorys_web_serves_one_process_per_cpu_with_redis_and_stops_on_sigterm(
    needs_postgres, redis_url_for_tests, tmp_path, unused_tcp_port
):
    """The image's command: the web processes only (no worker, no beat), by default one per
    CPU, on HOST:PORT."""
    data_dir = tmp_path / "data"
    env = run_env(
        data_dir,
        unused_tcp_port,
        HOST="127.0.0.1",
        DATABASE_URL=_database_url(),
        REDIS_URL=redis_url_for_tests,
    )
    web = subprocess.Popen(
        [sys.executable, "manage.py", "talorys_web"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=(tmp_path / "web.log").open("w"),
        text=True,
        start_new_session=True,
    )
    count = max(1, os.cpu_count() or 1)
    try:
        output = ""
        while "Serving" not in output:  # after the access log's lines (daphne's stdout)
            line = web.stdout.readline()
            assert line, f"talorys_web ended early:\n{output}"
            output += line
        url = f"http://127.0.0.1:{unused_tcp_port}"
        assert f"Serving {url}/ with {count} web process" in output
        names = ["web"] if count == 1 else [f"web-{n}" for n in range(1, count + 1)]
        assert sorted(processes(data_dir)) == names
        assert httpx.get(f"{url}/api/health", timeout=10).status_code == 200
    finally:
        os.killpg(web.pid, signal.SIGTERM)
        web.wait(60)
    assert web.returncode == 0
    assert not (data_dir / "processes.json").exists()
    wait_for(
        lambda: not subprocess.run(["pgrep", "-g", str(web.pid)], capture_output=True).stdout,
        "every web process to stop on SIGTERM",
    )
