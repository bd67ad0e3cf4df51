"""The SQLite database's disk fills up: writes are refused with a 503 in the
envelope (never a 500), reads go on, nothing already saved is lost or damaged, and writes work
again once there is room.

The suite's database is PostgreSQL, so this runs in a process of its own on a SQLite database
in a fresh data dir, the embedded default (tests/faults/sqlite_full_child.py); the full disk is
SQLite's own cap on the file's size, which fails a write with the same SQLITE_FULL.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest

from tests.conftest import ROOT


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> dict[str, Any]:
    env = {
        name: value
        for name, value in os.environ.items()
        # The child must not follow the suite onto PostgreSQL or insist on it.
        if name not in ("TALORYS_TEST_DATABASE_URL", "TALORYS_REQUIRE_SERVICES")
    } | {
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "TALORYS_TEST_SQLITE": "1",
        "TALORYS_DATA_DIR": str(tmp_path_factory.mktemp("sqlite-full")),
    }
    child = subprocess.run(
        [sys.executable, "-m", "tests.faults.sqlite_full_child"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert child.returncode == 0, child.stderr[-3000:]
    return json.loads(child.stdout.splitlines()[-1])


def assert_refused_cleanly(answer: dict[str, Any]) -> None:
    assert answer["status"] == 503, answer
    assert answer["content_type"].startswith("application/json")
    error = json.loads(answer["body"])["error"]
    assert error["code"] == "SERVICE_UNAVAILABLE"
    assert "disk is full" in error["message"]
    assert int(answer["retry_after"]) > 0


def test_a_write_past_the_full_disk_is_refused_in_the_envelope(report):
    assert report["created_before_full"] >= 1  # the cap was reached by writing, not at once
    assert_refused_cleanly(report["failed"])


def test_a_rewrite_that_does_not_fit_keeps_the_old_text(report):
    assert_refused_cleanly(report["rewrite"])
    kept = {note["title"]: note for note in report["notes"]}
    assert (kept["Kept 0"]["content"], kept["Kept 0"]["content_length"]) == ("body 0", 6)


def test_nothing_saved_is_lost_and_writes_resume_with_room(report):
    assert report["read_while_full"]["status"] == 200
    titles = sorted(note["title"] for note in report["notes"])
    fillers = [f"Filler {n}" for n in range(report["created_before_full"])]
    # Every write answered 201 is there, whole; the refused ones left nothing behind.
    assert titles == sorted(["Kept 0", "Kept 1", "Kept 2", *fillers])
    assert all(
        note["content_length"] == 150_000 for note in report["notes"] if note["title"] in fillers
    )
    assert report["integrity"] == "ok"
    assert report["after"]["status"] == 201
