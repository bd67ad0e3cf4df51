"""Every earlier shape of the backup document (version 1, backup/format.py) still imports:
``formats/`` holds one file per shape, written by hand as those exports wrote them (their
checksums computed the same way), each with text an older installation stored:

- ``v1-c459a4b-unsigned.json``: the first export, with no signature and no message links;
- ``v1-bc7a0b2-signed.json``: signed (here, by another installation), still no message links.

Exports since a1739df add ``parent_id`` to messages: tests/backup/test_round_trip.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.models import Message
from automations.models import Automation
from backup.services import backup_import
from talorys.history.models import Change
from talorys.workspace.models import Task
from tests.backup.helpers import clear

pytestmark = pytest.mark.django_db

FORMATS = sorted((Path(__file__).parent / "formats").glob("*.json"))


@pytest.mark.parametrize("path", FORMATS, ids=[path.stem for path in FORMATS])
def test_an_earlier_export_imports_whole(path: Path):
    document = path.read_bytes()
    rows = {kind: len(items) for kind, items in json.loads(document)["data"].items()}
    clear()

    preview = backup_import(source=document, dry_run=True)
    report = backup_import(source=document)

    assert preview["kinds"] == report["kinds"]
    added = {kind: count["added"] for kind, count in report["kinds"].items()}
    assert {kind: added.pop(kind) for kind in rows} == rows
    assert set(added.values()) <= {0}  # the kinds added since (files): none in the file
    assert report["made_here"] is False
    # Its one-line fields made one line, as the services make them now.
    assert sorted(Task.objects.values_list("title", flat=True)) == [
        "Call the plumber [1mtoday",
        "Old errand",
        "Pay rent",
    ]
    # Long text keeps its line ends.
    assert Task.objects.get(pk=1).details == "Leak under\r\nthe sink"
    assert Automation.objects.get().name == "Morning check"
    assert Change.objects.get(pk=1).title == "Call the plumber [1mtoday"
    # Linked as the upgrade linked messages written before branches.
    assert Message.objects.get(pk=2).parent_id == 1
