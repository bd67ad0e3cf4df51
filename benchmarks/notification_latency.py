"""Live notification latency: a notification made by another process (a celery worker's stand-in)
until an open page's /ws/notifications/ socket on a real daphne receives it.

    .venv/bin/python benchmarks/notification_latency.py [--mode embedded|redis] [--count 20]

embedded: no REDIS_URL, so daphne has an in-memory channel layer that this process cannot
reach; daphne's own watcher (talorys/notifications/services.py, one look a second) finds the row. redis: both
processes share a Redis channel layer and the broadcast on commit reaches the page directly.
The targets: within 3 s embedded, within 1 s with Redis.

Sets up its own throwaway PostgreSQL database (dropped at the end; TALORYS_BENCH_POSTGRES,
default postgres://postgres@127.0.0.1:5432/postgres) and, in redis mode, flushes a Redis
database (TALORYS_BENCH_REDIS_URL, default redis://127.0.0.1:6379/14).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import random
import shutil
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.load import start_daphne  # noqa: E402

PASSWORD = "benchmark passphrase of some length"


class Socket:
    """Just enough of a WebSocket client: the handshake and unmasked text frames."""

    def __init__(self, port: int, cookie: str) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(
            (
                "GET /ws/notifications/ HTTP/1.1\r\n"
                f"Host: 127.0.0.1:{port}\r\n"
                "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                f"Origin: http://127.0.0.1:{port}\r\nCookie: {cookie}\r\n\r\n"
            ).encode()
        )
        head = b""
        while b"\r\n\r\n" not in head:
            head += self.sock.recv(1)
        if b" 101 " not in head.split(b"\r\n", 1)[0]:
            raise RuntimeError(f"handshake refused: {head!r}")

    def _exactly(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise ConnectionError("socket closed")
            data += chunk
        return data

    def receive(self) -> dict:
        """The next text frame as JSON (daphne's pings, every 20 s, are skipped)."""
        while True:
            first, second = self._exactly(2)
            length = second & 0x7F
            if length == 126:
                length = int.from_bytes(self._exactly(2), "big")
            elif length == 127:
                length = int.from_bytes(self._exactly(8), "big")
            payload = self._exactly(length)
            opcode = first & 0x0F
            if opcode == 0x8:
                raise ConnectionError(f"closed by the server: {payload!r}")
            if opcode == 0x1:
                return json.loads(payload)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=["embedded", "redis"], default="embedded")
    parser.add_argument("--count", type=int, default=20)
    options = parser.parse_args()

    import httpx
    import psycopg

    admin_url = os.environ.get(
        "TALORYS_BENCH_POSTGRES", "postgres://postgres@127.0.0.1:5432/postgres"
    )
    redis_url = os.environ.get("TALORYS_BENCH_REDIS_URL", "redis://127.0.0.1:6379/14")
    db_name = f"talorys_bench_{os.getpid()}"
    data_dir = Path(tempfile.mkdtemp(prefix="talorys-bench-"))
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{db_name}"')
    env = os.environ | {
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": admin_url.rsplit("/", 1)[0] + f"/{db_name}",
        "TALORYS_DATA_DIR": str(data_dir),
        "LOG_LEVEL": "WARNING",
    }
    env.pop("REDIS_URL", None)
    if options.mode == "redis":
        import redis

        redis.Redis.from_url(redis_url).flushdb()
        env["REDIS_URL"] = redis_url
    os.environ.clear()
    os.environ.update(env)
    daphne = None
    try:
        import django

        django.setup()
        from django.contrib.auth import get_user_model
        from django.core.management import call_command
        from django.db import connection

        from talorys.notifications import services as notify

        call_command("migrate", interactive=False, verbosity=0)
        get_user_model().objects.create_superuser(username="owner", password=PASSWORD)
        connection.close()

        try:
            daphne, url = start_daphne(env, data_dir / "daphne.log")
        except RuntimeError as error:
            print(error, file=sys.stderr)
            return 1
        port = int(url.rsplit(":", 1)[1])
        login = httpx.post(
            f"{url}/api/auth/login",
            json={"username": "owner", "password": PASSWORD},
            headers={"Origin": url},
        )
        login.raise_for_status()
        cookie = "; ".join(f"{k}={v}" for k, v in login.cookies.items())
        page = Socket(port, cookie)
        time.sleep(0.5)  # the socket has joined its group

        latencies = []
        for i in range(options.count):
            time.sleep(random.uniform(0.1, 1.0))  # land anywhere in the watcher's second
            started = time.monotonic()
            sent = notify.notification_send(title=f"Benchmark {i}")
            while True:
                message = page.receive()
                if message.get("notification", {}).get("id") == sent.pk:
                    break
            latencies.append(time.monotonic() - started)
        connection.close()
        print(
            f"notification latency ({options.mode}, {options.count} notifications made by "
            "another process than daphne, PostgreSQL): "
            f"median {statistics.median(latencies):.3f} s, max {max(latencies):.3f} s"
        )
        return 0
    finally:
        if daphne is not None:
            daphne.terminate()
            daphne.wait(10)
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{db_name}" WITH (FORCE)')
        shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
