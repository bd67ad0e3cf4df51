"""Which outside services the suite can reach. Tests that need one skip without it, unless
TALORYS_REQUIRE_SERVICES=1, when they fail."""

from __future__ import annotations

import os
import shutil
import socket
from functools import cache


def require_services() -> bool:
    return os.environ.get("TALORYS_REQUIRE_SERVICES") == "1"


def _port_open(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


@cache
def postgres_url() -> str | None:
    url = os.environ.get("TALORYS_TEST_DATABASE_URL")
    if url:
        return url
    if os.environ.get("TALORYS_TEST_SQLITE") == "1":
        return None
    if not _port_open("127.0.0.1", 5432):
        return None
    try:
        import psycopg

        with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", connect_timeout=2):
            pass
    except Exception:
        return None
    return "postgres://postgres@127.0.0.1:5432/postgres"


@cache
def redis_url() -> str | None:
    # Each pytest-xdist worker has a database of its own (gw0: 15, gw1: 14, ...; from
    # TALORYS_TEST_REDIS_DB down when it is set): a test flushes the one it uses.
    worker = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0)
    first = int(os.environ.get("TALORYS_TEST_REDIS_DB", "15"))
    url = os.environ.get("TALORYS_TEST_REDIS_URL", f"redis://127.0.0.1:6379/{first - worker}")
    try:
        import redis

        redis.Redis.from_url(url, socket_timeout=1).ping()
    except Exception:
        return None
    return url


@cache
def chromium_path() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")
