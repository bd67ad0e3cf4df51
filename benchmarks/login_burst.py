"""A burst of concurrent wrong logins against a real daphne with the real argon2 hasher.

    .venv/bin/python benchmarks/login_burst.py [--logins 30] [--runs 3] [--username owner]
                                               [--root PATH]

Each run makes a throwaway data dir with the default SQLite database (as ``make run`` does),
migrates it, creates the owner, starts daphne on ``config.settings`` (argon2: about 100 MiB per
password check) and fires all logins at the same moment, each from its own thread, with a wrong
password. Prints per run and as the median of the runs: how many passwords the server evaluated
(answers 401: the password was checked; 429: refused before hashing), the web process's RSS
before the burst, and its peak RSS (VmHWM) after it.

``--root`` runs another checkout (e.g. a ``git worktree`` of an older commit) for comparison.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks._database import free_port  # noqa: E402

PASSWORD = "benchmark passphrase 1"


def _kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/{pid}/status")


def _post(url: str, body: dict) -> int:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def one_run(*, root: Path, logins: int, username: str) -> dict:
    data_dir = Path(tempfile.mkdtemp(prefix="talorys-login-burst-"))
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL"}} | {
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "TALORYS_DATA_DIR": str(data_dir),
    }
    python = sys.executable
    subprocess.run([python, "manage.py", "migrate", "-v", "0"], cwd=root, env=env, check=True)
    subprocess.run(
        [
            python,
            "-c",
            "import django; django.setup(); from django.contrib.auth import get_user_model; "
            f"get_user_model().objects.create_superuser('owner', '', {PASSWORD!r})",
        ],
        cwd=root,
        env=env,
        check=True,
    )
    port = free_port()
    daphne = subprocess.Popen(
        [
            str(Path(python).with_name("daphne")),
            "-b",
            "127.0.0.1",
            "-p",
            str(port),
            "config.asgi:application",
        ],
        cwd=root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"{url}/api/health", timeout=1):
                    break
            except (urllib.error.URLError, ConnectionError):
                if time.monotonic() > deadline or daphne.poll() is not None:
                    raise RuntimeError("daphne did not start") from None
                time.sleep(0.1)
        rss_before = _kib(daphne.pid, "VmRSS")
        start = threading.Barrier(logins)
        statuses: list[int] = []
        lock = threading.Lock()

        def login() -> None:
            start.wait()
            status = _post(
                f"{url}/api/auth/login", {"username": username, "password": "wrong password"}
            )
            with lock:
                statuses.append(status)

        began = time.monotonic()
        threads = [threading.Thread(target=login) for _ in range(logins)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        seconds = time.monotonic() - began
        return {
            "statuses": dict(sorted(collections.Counter(statuses).items())),
            "evaluated": statuses.count(401),
            "rss_before_mib": rss_before / 1024,
            "peak_rss_mib": _kib(daphne.pid, "VmHWM") / 1024,
            "seconds": seconds,
        }
    finally:
        daphne.terminate()
        daphne.wait(10)
        shutil.rmtree(data_dir, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--logins", type=int, default=30)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--username", default="owner")
    parser.add_argument("--root", type=Path, default=ROOT)
    args = parser.parse_args()

    results = []
    for n in range(1, args.runs + 1):
        result = one_run(root=args.root.resolve(), logins=args.logins, username=args.username)
        results.append(result)
        print(
            f"run {n}: statuses {result['statuses']}  evaluated {result['evaluated']}  "
            f"RSS before {result['rss_before_mib']:.0f} MiB  peak {result['peak_rss_mib']:.0f} MiB"
            f"  burst {result['seconds']:.1f} s",
            flush=True,
        )
    print(
        f"median of {args.runs}: evaluated "
        f"{statistics.median(r['evaluated'] for r in results):g} of {args.logins}, peak RSS "
        f"{statistics.median(r['peak_rss_mib'] for r in results):.0f} MiB (before the burst "
        f"{statistics.median(r['rss_before_mib'] for r in results):.0f} MiB), burst "
        f"{statistics.median(r['seconds'] for r in results):.1f} s"
    )


if __name__ == "__main__":
    main()
