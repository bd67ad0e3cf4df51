"""Run by test_sqlite_disk_full.py in a process of its own, on a SQLite database in a fresh data
dir (the suite's own database is PostgreSQL): fills the database up to a cap and prints, as one
JSON object, what the API answered and what was left.

The cap is SQLite's ``PRAGMA max_page_count``, set on every new connection: past it SQLite fails
a write with SQLITE_FULL ("database or disk is full"), the error a full disk gives.
"""

from __future__ import annotations

import json
import os
import sqlite3
from typing import Any

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.db.backends.signals import connection_created  # noqa: E402
from django.test import Client  # noqa: E402

BIG = "x" * 150_000  # most of Note.CONTENT_MAX: a few of these fill the capped database


def answer(response: Any) -> dict[str, Any]:
    return {
        "status": response.status_code,
        "content_type": response.get("Content-Type", ""),
        "retry_after": response.get("Retry-After"),
        "body": response.content.decode()[:500],
    }


def capped(sender: Any, connection: Any, **kwargs: Any) -> None:
    with connection.cursor() as cursor:
        cursor.execute(f"PRAGMA max_page_count = {CAP}")


def main() -> dict[str, Any]:
    global CAP
    call_command("migrate", verbosity=0)
    get_user_model().objects.create_superuser(username="owner", password="pw")
    client = Client(enforce_csrf_checks=True)
    login = client.post(
        "/api/auth/login", {"username": "owner", "password": "pw"}, content_type="application/json"
    )
    headers = {"X-CSRFToken": login.json()["csrf_token"]}

    def post(path: str, body: dict[str, Any], method: str = "post") -> Any:
        send = getattr(client, method)
        return send(path, json.dumps(body), content_type="application/json", headers=headers)

    saved = [post("/api/notes", {"title": f"Kept {n}", "content": f"body {n}"}) for n in range(3)]
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA page_count")
        CAP = cursor.fetchone()[0] + 100  # room for two more big notes, then full
    connection.close()
    connection_created.connect(capped)

    created, failed = 0, None
    for n in range(50):
        response = post("/api/notes", {"title": f"Filler {n}", "content": BIG})
        if response.status_code != 201:
            failed = answer(response)
            break
        created += 1
    first = saved[0].json()["id"]
    rewrite = answer(post(f"/api/notes/{first}", {"content": BIG + BIG[:40_000]}, "patch"))
    read_while_full = answer(client.get("/api/notes", headers=headers))

    connection_created.disconnect(capped)
    connection.close()
    notes = client.get("/api/notes?limit=100", headers=headers).json()["items"]
    after = answer(post("/api/notes", {"title": "After", "content": "space again"}))
    database = connection.settings_dict["NAME"]
    with sqlite3.connect(database) as check:
        integrity = check.execute("PRAGMA integrity_check").fetchone()[0]
    return {
        "cap_pages": CAP,
        "created_before_full": created,
        "failed": failed,
        "rewrite": rewrite,
        "read_while_full": read_while_full,
        "notes": [
            {"title": n["title"], "content_length": len(n["content"]), "content": n["content"][:20]}
            for n in notes
        ],
        "after": after,
        "integrity": integrity,
    }


CAP = 0

if __name__ == "__main__":
    print(json.dumps(main()))
