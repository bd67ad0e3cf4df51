"""The recall sources memory registers: memories, and the workspace's tasks, notes and projects
(below memory, so it registers them). Agent registers messages and automations registers
automations from their own apps (memory imports neither)."""

from __future__ import annotations

from typing import Any

from memory.recall.sources import Doc, RecallSource
from memory.selectors import current_memories
from talorys.workspace.models import Note, Project, Task


def _memory_doc(memory: Any) -> Doc:
    return Doc(object_id=memory.pk, title="", body=memory.text)


def memory_sources() -> list[RecallSource]:
    return [
        RecallSource(
            kind="memories",
            live=current_memories,
            doc=_memory_doc,
            change_kind="memory",
            columns=("text",),
        ),
        RecallSource(
            kind="tasks",
            live=Task.objects.live,
            doc=lambda t: Doc(object_id=t.pk, title=t.title, body=t.details),
            change_kind="task",
            columns=("title", "details"),
        ),
        RecallSource(
            kind="notes",
            live=Note.objects.live,
            doc=lambda n: Doc(object_id=n.pk, title=n.title, body=n.content),
            change_kind="note",
            columns=("title", "content"),
        ),
        RecallSource(
            kind="projects",
            live=Project.objects.live,
            doc=lambda p: Doc(object_id=p.pk, title=p.name, body=p.description),
            change_kind="project",
            columns=("name", "description"),
        ),
    ]
