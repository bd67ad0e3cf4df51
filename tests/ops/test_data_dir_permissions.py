"""The data dir (database, WAL, secrets, broker messages, static files) is private to its user:
0700 directories and 0600 files, for a new install and repaired for an existing one."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

# Starting the product means importing its settings; this also opens the SQLite database in
# WAL mode and writes to it, as the first request would.
START = """
import django
django.setup()
from django.db import connection
with connection.cursor() as cursor:
    cursor.execute("CREATE TABLE IF NOT EXISTS probe (x integer)")
    cursor.execute("INSERT INTO probe VALUES (1)")
    cursor.execute("PRAGMA journal_mode")
    journal = cursor.fetchone()[0]
    # The WAL goes away with the last connection: look while it is open.
    from django.conf import settings
    live = {p.name: oct(p.stat().st_mode & 0o777) for p in settings.DATA_DIR.glob("talorys.sqlite3*")}
    print(journal, sorted(live.items()))
"""


# Each starts the settings in a fresh Python process: a slow lane (tests/conftest.py).
pytestmark = pytest.mark.subprocess


def start(data_dir: Path) -> str:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"DATABASE_URL", "REDIS_URL", "SECRET_KEY"}
    } | {"DJANGO_SETTINGS_MODULE": "config.settings", "TALORYS_DATA_DIR": str(data_dir)}
    done = subprocess.run(
        [sys.executable, "-c", START],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def modes(root: Path) -> dict[str, int]:
    found = {".": stat.S_IMODE(root.stat().st_mode)}
    for path in root.rglob("*"):
        if not path.is_symlink():
            found[str(path.relative_to(root))] = stat.S_IMODE(path.stat().st_mode)
    return found


def wrong_modes(root: Path) -> dict[str, str]:
    return {
        name: oct(mode)
        for name, mode in modes(root).items()
        if mode != (0o700 if (root / name).is_dir() else 0o600)
    }


def test_a_new_install_makes_a_private_data_dir_database_and_wal(tmp_path):
    data_dir = tmp_path / "data"
    old_umask = os.umask(0o022)  # what a login shell usually has
    try:
        output = start(data_dir)
    finally:
        os.umask(old_umask)

    assert output == (
        "wal [('talorys.sqlite3', '0o600'), ('talorys.sqlite3-shm', '0o600'),"
        " ('talorys.sqlite3-wal', '0o600')]"
    )
    assert {"talorys.sqlite3", ".secret_key", "broker/queue"} <= set(modes(data_dir))
    assert wrong_modes(data_dir) == {}


def test_an_existing_world_readable_install_is_repaired_at_start(tmp_path):
    data_dir = tmp_path / "data"
    # What an earlier version left: 0755 directories and 0644 files everywhere.
    files = [
        "talorys.sqlite3",
        "talorys.sqlite3-wal",
        "talorys.sqlite3-shm",
        ".secret_key",
        "vapid_private_key.pem",
        "celerybeat-schedule",
        "broker/queue/msg.1",
        "broker/processed/msg.0",
        "static/admin/css/base.css",
    ]
    for name in files:
        path = data_dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x" if name != "talorys.sqlite3" else "")
        path.chmod(0o644)
    for directory in [data_dir, *{(data_dir / name).parent for name in files}]:
        directory.chmod(0o755)
    outside = tmp_path / "elsewhere.txt"
    outside.write_text("not ours to change")
    outside.chmod(0o644)
    (data_dir / "link").symlink_to(outside)
    (data_dir / "talorys.sqlite3-wal").unlink()  # an empty WAL file would not be a valid one
    (data_dir / "talorys.sqlite3-shm").unlink()
    assert wrong_modes(data_dir)  # the setup really is world-readable

    start(data_dir)

    assert wrong_modes(data_dir) == {}
    assert stat.S_IMODE(outside.stat().st_mode) == 0o644  # a symlink's target is left alone
    assert (data_dir / ".secret_key").read_text() == "x"  # repaired, not replaced
