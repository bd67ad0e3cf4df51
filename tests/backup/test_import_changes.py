"""An import's changes to items already here are in the change log (source ``import``), on
/changes/ and /api/changes, and revert like any other change."""

from __future__ import annotations

import pytest

from backup.services import backup_import
from talorys.history.changes import change_revert
from talorys.history.models import Change
from talorys.workspace.models import Note, Task
from tests.backup.helpers import document, exported, raw, seed

pytestmark = pytest.mark.django_db


def test_an_import_that_renames_a_task_is_logged_and_reverts(api):
    task = seed()["task"]
    doc = exported()
    row = next(row for row in doc["data"]["tasks"] if row["id"] == task.pk)
    row["title"] = "Water the beds twice"

    backup_import(source=raw(document(doc["data"])))

    logged = Change.objects.get(kind="task", object_id=task.pk, source="import")
    assert logged.action == "update"
    assert (logged.before["title"], logged.after["title"]) == (
        "Water the beds",
        "Water the beds twice",
    )
    listed = api.get("/api/changes").json()
    assert any(item["id"] == logged.pk for item in listed["items"])
    page = api.client.get("/changes/").content.decode()
    assert "by a backup import" in page and "Water the beds twice" in page
    reverted = api.post(f"/api/changes/{logged.pk}/revert")
    assert reverted.status_code == 200, reverted.content
    task.refresh_from_db()
    assert task.title == "Water the beds"


def test_an_import_that_bins_a_note_is_logged_and_restores():
    note = seed()["note"]
    doc = exported()
    row = next(row for row in doc["data"]["notes"] if row["id"] == note.pk)
    row["deleted_at"] = "2026-11-30T09:30:00+00:00"

    backup_import(source=raw(document(doc["data"])))

    logged = Change.objects.get(kind="note", object_id=note.pk, source="import")
    assert logged.action == "delete"
    change_revert(change_id=logged.pk)
    assert Note.objects.live().filter(pk=note.pk).exists()


def test_the_import_log_never_takes_an_id_the_files_change_log_brings():
    task = seed()["task"]
    doc = exported()
    next(row for row in doc["data"]["tasks"] if row["id"] == task.pk)["title"] = "Renamed"
    probe = Change.objects.create(kind="task", object_id=0, action="update", source="owner")
    Change.objects.all().delete()
    # The file's change log takes the very ids this database would hand out next.
    for offset, row in enumerate(doc["data"]["changes"], start=1):
        row.update(id=probe.pk + offset, reverts_id=probe.pk + 1 if row["reverts_id"] else None)

    backup_import(source=raw(document(doc["data"])))

    logged = Change.objects.get(kind="task", object_id=task.pk, source="import")
    assert logged.pk > probe.pk + len(doc["data"]["changes"])
    assert Change.objects.filter(source__in=["chat", "owner"]).count() == 2
    assert Task.objects.get(pk=task.pk).title == "Renamed"


def test_an_import_of_unchanged_items_logs_nothing():
    seed()

    backup_import(source=raw(exported()))

    assert not Change.objects.filter(source="import").exists()
