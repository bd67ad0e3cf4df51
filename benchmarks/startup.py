"""How long `make run` takes until the first page answers, warm and on a fresh clone.

    .venv/bin/python benchmarks/startup.py [--runs 3] [--cold]

Starts `make run` as a user types it (its own process group, a new data dir under a temporary
directory, no DATABASE_URL so SQLite, no REDIS_URL so the embedded broker, PORT a free port) and
times from the spawn until ``GET /login/`` answers 200, polled every 50 ms; then stops the group
as Ctrl-C does (SIGINT, then SIGKILL if anything is left after 20 s).

- default (warm): with this checkout's .venv (make's stamps skip the install). The first start
  on the new data dir includes its migrations ("first start (new data dir)"); then ``--runs``
  restarts on the same data dir, whose median is the figure. Floor: a bare
  ``python -c "import django; django.setup()"`` with the same settings, in the same run.
- ``--cold``: `git clone` of this repository's HEAD (no .venv), then `make run` there: the venv,
  uv from the bootstrap lock, the runtime lock, migrations, web + worker + beat. Floor: a fresh
  venv, ``uv pip sync`` of the same lock and ``django.setup()``, timed after the run (so always
  with uv's cache warm). Only comparable with the same state of uv's download cache, which the
  output names.

Targets: warm restart <= 5 s; cold `make run` on a fresh clone <= 45 s.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks._database import free_port  # noqa: E402
from benchmarks._results import figure  # noqa: E402

WARM_TARGET_S = 5.0
COLD_TARGET_S = 45.0
POLL_S = 0.05
# make echoes the recipe line before running it: its first appearance in the log ends the install.
RUN_LINE = "manage.py talorys_run"
SETUP_CODE = "import django; django.setup()"


def _env(data_dir: Path, **extra: str) -> dict[str, str]:
    """The user's environment with the embedded defaults: what a bare `make run` sees."""
    env = dict(os.environ)
    # Under `make bench` these would tie the inner make to the outer one's jobserver.
    for name in ("DATABASE_URL", "REDIS_URL", "VIRTUAL_ENV", "MAKEFLAGS", "MFLAGS", "MAKELEVEL"):
        env.pop(name, None)
    env.update(TALORYS_DATA_DIR=str(data_dir), HOST="127.0.0.1", TALORYS_MODEL_BASE_URL="")
    env.update(extra)
    return env


def _login_ok(port: int) -> bool:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
    try:
        conn.request("GET", "/login/")
        return conn.getresponse().status == 200
    except (OSError, http.client.HTTPException):
        return False
    finally:
        conn.close()


def _tail(log: Path, lines: int = 30) -> str:
    return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])


def _stop(proc: subprocess.Popen) -> tuple[float, bool]:
    """Ctrl-C to the whole group (make, talorys_run, daphne, worker, beat), as a terminal sends
    it; whatever is still there after 20 s is killed, so no process outlives the benchmark.
    Returns the seconds until the group was empty and whether SIGKILL was needed."""
    pgid = proc.pid  # start_new_session: the group's id is make's pid
    began = time.monotonic()
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGINT)
    deadline = began + 20
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=max(0.1, deadline - time.monotonic()))
    # Children are reparented when make exits; wait for the group itself to be empty.
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return time.monotonic() - began, False
        time.sleep(0.1)
    # Named, since a process that ignores Ctrl-C for 20 s is a finding in itself.
    print(f"still running 20 s after Ctrl-C, killed: {', '.join(_group(pgid)) or '?'}")
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)
    proc.wait()
    return time.monotonic() - began, True


def _group(pgid: int) -> list[str]:
    """The command lines of the live processes in a process group (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():  # "self" and "thread-self" are this process again
            continue
        try:
            stat = (entry / "stat").read_text()
            # Fields after the parenthesised name: state, ppid, pgrp, ...
            state, _ppid, group = stat.rsplit(")", 1)[1].split()[:3]
            if int(group) == pgid and state != "Z":
                found.append(
                    (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode().strip()[:80]
                )
        except (OSError, ValueError, IndexError):
            continue
    return found


class Start(NamedTuple):
    first_page: float  # seconds from the spawn to /login/ answering 200
    installed: float | None  # to make starting the recipe: the end of the install, if seen
    stop: float  # from Ctrl-C until no process of the group was left
    killed: bool  # whether anything needed SIGKILL


def _start(cwd: Path, data_dir: Path, log: Path, timeout: float) -> Start:
    """Spawn `make run`, time it to the first page, then stop its group."""
    port = free_port()
    with log.open("w") as out:
        began = time.perf_counter()
        proc = subprocess.Popen(
            ["make", "run"],
            cwd=cwd,
            env=_env(data_dir, PORT=str(port)),
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    installed = None
    try:
        deadline = began + timeout
        while True:
            if installed is None and RUN_LINE in log.read_text(errors="replace"):
                installed = time.perf_counter() - began
            if _login_ok(port):
                first_page = time.perf_counter() - began
                break
            if proc.poll() is not None:
                raise RuntimeError(f"make run exited with {proc.returncode}:\n{_tail(log)}")
            if time.perf_counter() > deadline:
                raise RuntimeError(f"/login/ did not answer within {timeout:.0f} s:\n{_tail(log)}")
            time.sleep(POLL_S)
    finally:
        stop, killed = _stop(proc)
    return Start(first_page, installed, stop, killed)


def _setup_time(python: Path, cwd: Path, data_dir: Path) -> float:
    """What any Django process of this project pays: interpreter, imports, settings, apps."""
    began = time.perf_counter()
    env = _env(data_dir, DJANGO_SETTINGS_MODULE="config.settings")  # as manage.py sets it
    subprocess.run([str(python), "-c", SETUP_CODE], cwd=cwd, env=env, check=True)
    return time.perf_counter() - began


def _uv_cache() -> str:
    cache = os.environ.get("UV_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "uv"
    )
    warm = os.path.isdir(cache) and any(os.scandir(cache))
    return f"uv cache {'warm' if warm else 'cold'}: {cache} {'non-empty' if warm else 'empty'}"


def _row(what: str, seconds: float) -> None:
    print(f"{what:50} {seconds:8.2f}")


def _report(name: str, value: float, **kwargs: object) -> None:
    """``figure(...)``, and the same figure in this script's own output."""
    row = figure("startup", name, value, "s", better="lower", database="sqlite", **kwargs)
    line = f"figure: {name}: {row['value']:.2f} s"
    if row["floor"] is not None:
        line += f", floor {row['floor']:.2f} s, ratio {row['ratio']:.2f}"
    if row["target"] is not None:
        line += f", target {row['target']:.0f} s, {'met' if row['met'] else 'NOT met'}"
    print(line)


def _median(starts: list[Start], field: str) -> float:
    return statistics.median(getattr(start, field) for start in starts)


def _stop_row(starts: list[Start]) -> None:
    killed = sum(start.killed for start in starts)
    what = f"stop after Ctrl-C, median of {len(starts)}"
    _row(what + (f" ({killed} needed SIGKILL)" if killed else ""), _median(starts, "stop"))


def _warm(runs: int, work: Path) -> None:
    data_dir = work / "data"
    log = work / "make-run.log"
    print(f"warm: this checkout's .venv; SQLite and the embedded broker in {data_dir}")
    first = _start(ROOT, data_dir, log, timeout=120)
    restarts: list[Start] = []
    floors: list[float] = []
    for _ in range(runs):
        # Interleaved, so the floor and the restarts see the same (busy) machine.
        floors.append(_setup_time(ROOT / ".venv/bin/python", ROOT, data_dir))
        restarts.append(_start(ROOT, data_dir, log, timeout=60))
    median, floor = _median(restarts, "first_page"), statistics.median(floors)
    print(f"{'what':50} {'seconds':>8}")
    _row("first start (new data dir)", first.first_page)
    for number, start in enumerate(restarts, 1):
        _row(f"warm restart {number}", start.first_page)
    _row(f"warm restart, median of {runs}", median)
    _row("floor: python -c 'import django; django.setup()'", floor)
    _stop_row([first, *restarts])
    verdict = "meets" if median <= WARM_TARGET_S else "MISSES"
    print(f"warm restart median {median:.2f} s {verdict} the target of {WARM_TARGET_S:.0f} s")
    _report(
        "warm restart to first page",
        median,
        floor=floor,
        floor_name="python -c 'import django; django.setup()', same settings (median)",
        target=WARM_TARGET_S,
        note=f"median of {runs}",
    )
    _report("first start (new data dir) to first page", first.first_page)


def _cold(work: Path) -> None:
    clone = work / "clone"
    data_dir = work / "data"
    cache = _uv_cache()
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=clone, capture_output=True, text=True
    ).stdout.strip()
    print(f"cold: fresh clone of HEAD {head} (committed files only, no .venv); {cache}")
    start = _start(clone, data_dir, work / "make-run.log", timeout=600)
    total, installed = start.first_page, start.installed
    # The floor: the lock installed into a new venv by the same uv, then one django.setup().
    venv = work / "floor-venv"
    began = time.perf_counter()
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    sync = [str(clone / ".venv/bin/uv"), "pip", "sync", "-q", "--python", str(venv / "bin/python")]
    sync += ["--require-hashes", "--compile-bytecode", "requirements/runtime.lock"]
    subprocess.run(sync, cwd=clone, check=True)
    install_floor = time.perf_counter() - began
    setup = _setup_time(venv / "bin/python", clone, data_dir)
    floor = install_floor + setup
    print(f"{'what':50} {'seconds':>8}")
    if installed is not None:
        _row("install (venv, uv, runtime lock)", installed)
        _row("then migrate and start to first page", total - installed)
    _row("cold make run to first page", total)
    _row("floor: new venv + uv pip sync of the lock", install_floor)
    _row("floor: + python -c 'import django; django.setup()'", floor)
    _stop_row([start])
    verdict = "meets" if total <= COLD_TARGET_S else "MISSES"
    print(f"cold make run {total:.2f} s {verdict} the target of {COLD_TARGET_S:.0f} s, {cache}")
    _report(
        "cold make run on a fresh clone to first page",
        total,
        floor=floor,
        floor_name="new venv, uv pip sync of runtime.lock (uv cache warm), django.setup()",
        target=COLD_TARGET_S,
        note=cache,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--warm", action="store_true", help="this checkout's .venv (the default)")
    mode.add_argument("--cold", action="store_true", help="a fresh clone, installed from the lock")
    parser.add_argument("--runs", type=int, default=3, help="warm restarts (the median is kept)")
    options = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="talorys-startup-"))
    try:
        if options.cold:
            _cold(work)
        else:
            _warm(options.runs, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
