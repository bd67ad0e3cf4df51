"""What the benchmarks share: a throwaway database (PostgreSQL at 127.0.0.1:5432 when it
answers, else SQLite in a temporary directory), created before Django is set up; a free port."""

from __future__ import annotations

import os
import socket


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def postgres_admin_url() -> str | None:
    try:
        import psycopg

        with psycopg.connect("postgresql://postgres@127.0.0.1:5432/postgres", connect_timeout=2):
            return "postgresql://postgres@127.0.0.1:5432/postgres"
    except Exception:
        return None


def create_database(use_sqlite: bool, data_dir: str) -> tuple[str, str | None]:
    """The DATABASE_URL to use, and the PostgreSQL database to drop afterwards."""
    admin = None if use_sqlite else postgres_admin_url()
    if admin is None:
        return f"sqlite:///{data_dir}/bench.sqlite3", None
    import psycopg

    name = f"talorys_bench_{os.getpid()}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    return f"postgres://postgres@127.0.0.1:5432/{name}", name


def drop_database(name: str) -> None:
    import psycopg

    with psycopg.connect(postgres_admin_url() or "", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def bench_environment(use_sqlite: bool, **extra: str) -> tuple[str, str | None]:
    """A throwaway database (``create_database``) in a fresh data dir, and this process's
    environment set for it with the embedded defaults (no Redis, no model server; ``extra``
    added), so that child processes started with ``os.environ`` get the same. Returns the data
    dir and the PostgreSQL database to drop afterwards (``drop_database``), if any."""
    import tempfile

    data_dir = tempfile.mkdtemp(prefix="talorys-bench-")
    database_url, pg_name = create_database(use_sqlite, data_dir)
    os.environ.update(
        {
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DATABASE_URL": database_url,
            "TALORYS_DATA_DIR": data_dir,
            "TALORYS_MODEL_BASE_URL": "",
            **extra,
        }
    )
    os.environ.pop("REDIS_URL", None)
    return data_dir, pg_name


def start_django(use_sqlite: bool) -> tuple[str, str | None]:
    """``bench_environment``, then ``django.setup()``. Returns the database URL and the
    PostgreSQL database to drop afterwards, if any."""
    _data_dir, pg_name = bench_environment(use_sqlite)
    import django

    django.setup()
    return os.environ["DATABASE_URL"], pg_name


def analyze() -> None:
    """PostgreSQL: fresh planner statistics and visibility map after seeding, as autovacuum
    would have made by now in use. (This machine's PostgreSQL runs without autovacuum; without
    statistics the planner takes 10,000 fresh rows for a handful and picks plans no install
    would see, and without the visibility map a count reads every row of the table where an
    install reads an index: ``VACUUM``, not only ``ANALYZE``.)"""
    from django.db import connection

    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
