"""The test database's URL, for the live processes a fault test starts (daphne, a worker)."""

from __future__ import annotations

from django.db import connection


def database_url(*, host: str = "", port: int | None = None) -> str:
    """The URL of this test's PostgreSQL database, optionally through another host and port."""
    db = connection.settings_dict
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    where = f"{host or db['HOST']}:{port or db['PORT'] or 5432}"
    return f"postgres://{db['USER']}{password}@{where}/{db['NAME']}"
