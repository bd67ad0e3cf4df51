"""`manage.py talorys_setup` run as the operator runs it (a process of its own, on its own
environment), against the database it is pointed at: an upgrade that finds no installation stops
and says where it looked; a PostgreSQL database that does not exist is named, with how to make it,
well before the connection pool's timeout."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from tests.services import postgres_url

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.subprocess


def setup_process(data_dir: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("TALORYS_", "DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS"))
    }
    clean |= {"TALORYS_DATA_DIR": str(data_dir), "TALORYS_OWNER_PASSWORD": "a long passphrase 42"}
    return subprocess.run(
        [sys.executable, "manage.py", "talorys_setup", "--noinput", *args],
        cwd=ROOT,
        env=clean | env,
        capture_output=True,
        text=True,
        timeout=180,
    )


def server() -> psycopg.Connection:
    return psycopg.connect(postgres_url(), autocommit=True)


def url_of(name: str) -> str:
    return postgres_url().rsplit("/", 1)[0] + f"/{name}"


@pytest.fixture
def empty_database(needs_postgres) -> Iterator[str]:
    """A PostgreSQL database with nothing in it: a DATABASE_URL pointed at the wrong one."""
    name = f"talorys_empty_{uuid.uuid4().hex[:12]}"
    with server() as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield url_of(name)
    finally:
        with server() as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def tables(url: str) -> list[str]:
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        return [row[0] for row in rows]


def test_an_upgrade_of_an_empty_data_dir_stops_and_makes_no_database(tmp_path):
    data_dir = tmp_path / "data"

    done = setup_process(data_dir, "--upgrade")

    assert done.returncode != 0
    assert "upgrade done" not in done.stdout
    assert "No installation to upgrade" in done.stderr
    database = data_dir.resolve() / "talorys.sqlite3"
    assert f"sqlite3 {database}" in done.stderr  # the database it looked for
    assert f"the data directory is {data_dir.resolve()}" in done.stderr
    assert not database.exists()
    assert not (data_dir / "backups").exists()


def test_a_deployments_first_upgrade_may_make_the_installation(tmp_path):
    data_dir = tmp_path / "data"

    done = setup_process(data_dir, "--upgrade", "--allow-new-install")

    assert done.returncode == 0, done.stderr
    assert "No installation to upgrade" in done.stdout and "making a new one" in done.stdout
    assert "setup done" in done.stdout  # what it did: not an upgrade
    assert "Created the owner account 'owner'." in done.stdout
    assert (data_dir / "talorys.sqlite3").exists()


@pytest.mark.postgres
def test_an_upgrade_of_the_wrong_database_stops_and_changes_nothing(tmp_path, empty_database):
    done = setup_process(tmp_path / "data", "--upgrade", DATABASE_URL=empty_database)

    assert done.returncode != 0
    assert "upgrade done" not in done.stdout
    name = empty_database.rsplit("/", 1)[1]
    assert "No installation to upgrade" in done.stderr
    assert f"postgresql {name} on 127.0.0.1:5432" in done.stderr
    assert "has no Talorys tables" in done.stderr
    assert tables(empty_database) == []


@pytest.mark.postgres
def test_a_database_that_does_not_exist_is_named_with_how_to_create_it(tmp_path, needs_postgres):
    name = f"talorys_missing_{uuid.uuid4().hex[:12]}"
    started = time.monotonic()

    # A pool timeout far longer than the answer may take: the old check waited for all of it.
    done = setup_process(
        tmp_path / "data", DATABASE_URL=url_of(name), TALORYS_DB_POOL_TIMEOUT_SECONDS="90"
    )

    assert done.returncode != 0
    assert f"The database '{name}' does not exist" in done.stderr
    assert f"createdb -h 127.0.0.1 -p 5432 -U postgres {name}" in done.stderr
    assert "CREATE DATABASE" in done.stderr
    assert time.monotonic() - started < 80  # not the pool's 90 s
    with server() as conn:
        found = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
    assert found is None
