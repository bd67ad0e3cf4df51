"""Each bad backup is refused with an error naming the problem, and changes nothing: every
table's row count and content are the same before and after."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from backup.services import backup_import
from talorys.lib.errors import ValidationFailed
from tests.backup.helpers import document, exported, fingerprint, raw, seed

pytestmark = pytest.mark.django_db


def changed(edit: Callable[[dict[str, Any]], None]) -> bytes:
    """The seeded backup, edited, with a checksum that matches the edit (so the edit is what
    is refused, not the checksum)."""
    data = exported()["data"]
    edit(data)
    return raw(document(data))


def _set(kind: str, field: str, value: Any, index: int = 0) -> Callable[[dict], None]:
    def edit(data: dict) -> None:
        data[kind][index][field] = value

    return edit


def _duplicate(kind: str) -> Callable[[dict], None]:
    def edit(data: dict) -> None:
        data[kind].append(dict(data[kind][0]))

    return edit


def _bad_checksum() -> bytes:
    doc = exported()
    doc["data"]["tasks"][0]["title"] = "Changed after export"
    return raw(doc)


BAD: dict[str, tuple[Callable[[], bytes], str]] = {
    "malformed JSON": (lambda: b'{"format": "talorys-backup", "version": 1,', "not valid JSON"),
    "not UTF-8": (lambda: b"\xff\xfe{}", "not UTF-8"),
    "a JSON list": (lambda: b"[]", "not a JSON object"),
    "another format": (lambda: raw(exported() | {"format": "other-app"}), "not a Talorys backup"),
    "another version": (lambda: raw(exported() | {"version": 2}), "version 2"),
    "a bad checksum": (_bad_checksum, "checksum does not match"),
    "no checksum": (
        lambda: raw({k: v for k, v in exported().items() if k != "checksum"}),
        "checksum",
    ),
    "an unknown kind": (
        lambda: raw(document(exported()["data"] | {"passwords": [{"id": 1}]})),
        "passwords",
    ),
    "a title over the limit": (lambda: changed(_set("tasks", "title", "x" * 501)), "tasks[0]"),
    "a NUL byte": (lambda: changed(_set("notes", "content", "a\x00b")), "NUL"),
    "a NUL in a title": (lambda: changed(_set("projects", "name", "bell\x00")), "NUL"),
    "a NUL inside JSON": (lambda: changed(_set("changes", "after", {"t": "\x00"})), "NUL"),
    "a wrong type": (lambda: changed(_set("tasks", "priority", "urgent")), "tasks[0]"),
    "an unknown choice": (
        lambda: changed(_set("memories", "category", "secret")),
        "must be one of",
    ),
    "an unknown column": (lambda: changed(_set("notes", "owner_id", 1)), "owner_id"),
    "a naive date": (lambda: changed(_set("tasks", "due_at", "2026-01-01T10:00:00")), "due_at"),
    "a date out of range": (
        lambda: changed(_set("tasks", "due_at", "9999-12-31T00:00:00+00:00")),
        "due_at",
    ),
    "a done task without completed_at": (
        lambda: changed(_set("tasks", "completed_at", None, 1)),
        "completed_at",
    ),
    "a bad schedule": (
        lambda: changed(_set("automations", "schedule", {"type": "hourly"})),
        "schedule",
    ),
    "a bad repeat": (
        lambda: changed(_set("tasks", "repeat", {"type": "once", "at": "2026-12-07T08:00:00Z"})),
        "repeat",
    ),
    "an id too large": (lambda: changed(_set("notes", "id", 2**63)), "id"),
    "duplicate ids": (lambda: changed(_duplicate("notes")), "twice"),
    "a dangling project": (lambda: changed(_set("tasks", "project_id", 424242)), "424242"),
    "a dangling conversation": (
        lambda: changed(_set("messages", "conversation_id", 424243)),
        "424243",
    ),
    "settings not id 1": (lambda: changed(_set("settings", "id", 2)), "id 1"),
    "a limit past its bound": (
        lambda: changed(_set("settings", "max_steps_per_turn", 51)),
        "max_steps_per_turn",
    ),
}


@pytest.mark.parametrize("case", BAD, ids=list(BAD))
def test_a_bad_backup_is_refused_by_name_and_changes_nothing(case: str):
    seed()
    body, named = BAD[case][0](), BAD[case][1]
    before = fingerprint()

    with pytest.raises(ValidationFailed) as refused:
        backup_import(source=body)

    assert named in refused.value.message
    assert fingerprint() == before


def test_a_conflict_only_the_database_sees_rolls_the_whole_import_back():
    # Two runs of one automation for the same slot: the schema cannot tell, the database can.
    seed()
    data = exported()["data"]
    data["automation_runs"].append(dict(data["automation_runs"][0], id=999))
    data["tasks"].append(dict(data["tasks"][0], id=998, title="Would be added"))
    before = fingerprint()

    with pytest.raises(ValidationFailed, match="nothing was imported"):
        backup_import(source=raw(document(data)))

    assert fingerprint() == before


def test_many_problems_are_listed_a_few_at_a_time():
    seed()
    body = changed(lambda data: data["notes"].extend({"id": n} for n in range(1000, 1100)))

    with pytest.raises(ValidationFailed) as refused:
        backup_import(source=body)

    assert "more)" in refused.value.message and len(refused.value.details["problems"]) == 20
    assert json.dumps(refused.value.details)
