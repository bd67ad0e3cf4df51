"""Items brought in keep the time they were said: after a backup's import, every recall entry's
``stated_at`` is the item's own time from the file, not the import's, and a question that names
that period finds them."""

from __future__ import annotations

import datetime as dt
import json

import pytest

from agent.models import Message
from backup.services import backup_import
from memory import selectors, services
from memory.models import Memory, RecallEntry
from talorys.workspace.models import Note, Project, Task
from tests.backup.helpers import clear, exported, seed

pytestmark = pytest.mark.django_db

SAID = dt.datetime(2021, 4, 2, 9, 30, tzinfo=dt.UTC)


def test_imported_items_keep_the_time_they_were_said(keyword_recall):
    seed()
    Message.objects.update(created_at=SAID, updated_at=SAID)
    for model in (Memory, Task, Note, Project):
        model.objects.update(updated_at=SAID)
    document = exported()
    clear()

    backup_import(source=json.dumps(document).encode())
    services.reindex()

    entries = RecallEntry.objects.filter(
        live=True, kind__in=["message", "memory", "task", "note", "project"]
    )
    assert entries.count() >= 5
    assert {entry.stated_at for entry in entries} == {SAID}
    message = Message.objects.exclude(content="").first()
    assert message is not None
    query = f"{message.content[:40]} in April 2021"
    assert message.pk in [hit.id for hit in selectors.recall_items(query=query, kinds=["message"])]
