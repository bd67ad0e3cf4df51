"""The fault tests' own Redis: a redis-server each test starts, kills and starts again."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.contrib.auth.hashers import PBKDF2PasswordHasher

from tests.conftest import OWNER_PASSWORD
from tests.waiting import wait_for


class RedisServer:
    """A redis-server of this test's own, stopped and started on one port."""

    def __init__(self, port: int, log: Path) -> None:
        self.port, self.log = port, log
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        binary = shutil.which("redis-server")
        assert binary, "redis-server is not on PATH"
        self.process = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly"]
            + ["no", "--logfile", str(self.log)],
            start_new_session=True,
        )
        wait_for(self.answers, "redis-server to answer", seconds=10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)  # a crash: no goodbye to the clients
            self.process.wait(10)

    def answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as conn:
                conn.sendall(b"PING\r\n")
                return conn.recv(16).startswith(b"+PONG")
        except OSError:
            return False


@pytest.fixture
def redis_server(tmp_path, unused_tcp_port) -> Iterator[RedisServer]:
    server = RedisServer(unused_tcp_port, tmp_path / "redis.log")
    server.start()
    yield server
    server.stop()


def production_hash(owner) -> None:
    """The suite hashes with MD5, which production settings do not accept: a hash they do."""
    owner.password = PBKDF2PasswordHasher().encode(OWNER_PASSWORD, "redis", iterations=1000)
    owner.save(update_fields=["password"])
