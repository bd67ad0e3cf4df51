"""The recall sources memory registers: memories, and the workspace's tasks, notes and projects
(below memory, so it registers them). Agent registers messages and automations registers
automations from their own apps (memory imports neither)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

from memory.recall.sources import Doc, RecallSource
from memory.selectors import current_memories
from talorys.workspace.models import Note, Project, Task
from talorys.workspace.selectors import changed_ids


def changes_of(kind: str) -> Callable[[dt.datetime], set[int]]:
    """``changed_since`` for a kind whose services record every change (the change log)."""
    return lambda since: changed_ids(kind=kind, since=since)


def _memory_doc(memory: Any) -> Doc:
    return Doc(object_id=memory.pk, title="", body=memory.text)


def memory_sources() -> list[RecallSource]:
    return [
        RecallSource(
            kind="memories",
            live=current_memories,
            doc=_memory_doc,
            changed_since=changes_of("memory"),
            columns=("text",),
        ),
        RecallSource(
            kind="tasks",
            live=Task.objects.live,
            doc=lambda t: Doc(object_id=t.pk, title=t.title, body=t.details),
            changed_since=changes_of("task"),
            columns=("title", "details"),
        ),
        RecallSource(
            kind="notes",
            live=Note.objects.live,
            doc=lambda n: Doc(object_id=n.pk, title=n.title, body=n.content),
            changed_since=changes_of("note"),
            columns=("title", "content"),
        ),
        RecallSource(
            kind="projects",
            live=Project.objects.live,
            doc=lambda p: Doc(object_id=p.pk, title=p.name, body=p.description),
            changed_since=changes_of("project"),
            columns=("name", "description"),
        ),
    ]
