"""model_update (talorys/lib/updates.py): the one way an update service writes its fields."""

from __future__ import annotations

from django.db import connection
from django.test.utils import CaptureQueriesContext

from talorys.lib.updates import model_update
from talorys.workspace import services
from talorys.workspace.models import Note, Task


def test_it_saves_only_the_allowed_fields_that_changed_and_the_timestamp(db):
    note = services.note_create(title="Plan", content="Draft")
    stamped = note.updated_at
    with CaptureQueriesContext(connection) as queries:
        note, updated = model_update(
            instance=note,
            fields=("title", "content"),
            data={"title": "Plan B", "content": "Draft", "version": 99},
        )
    assert updated is True
    [write] = [q["sql"] for q in queries.captured_queries]
    assert '"title"' in write and '"updated_at"' in write
    assert '"content"' not in write and '"version"' not in write
    stored = Note.objects.get(pk=note.pk)
    assert (stored.title, stored.content, stored.version) == ("Plan B", "Draft", 1)
    assert stored.updated_at > stamped


def test_nothing_changed_writes_nothing(db):
    note = services.note_create(title="Plan")
    with CaptureQueriesContext(connection) as queries:
        _, updated = model_update(instance=note, fields=("title",), data={"title": "Plan"})
    assert updated is False
    assert queries.captured_queries == []


def test_a_relation_is_compared_by_id_without_reading_the_related_row(db):
    project = services.project_create(name="Home")
    task = services.task_create(title="Paint", project_id=project.pk)
    task = Task.objects.get(pk=task.pk)  # the project not loaded
    with CaptureQueriesContext(connection) as queries:
        _, updated = model_update(instance=task, fields=("project",), data={"project": project})
    assert updated is False
    assert queries.captured_queries == []
    _, updated = model_update(instance=task, fields=("project",), data={"project": None})
    assert updated is True
    assert Task.objects.get(pk=task.pk).project_id is None
