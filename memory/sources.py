"""The recall sources memory registers: memories, and the workspace's tasks, notes and projects
(below memory, so it registers them). Agent registers messages and automations registers
automations from their own apps (memory imports neither)."""

from __future__ import annotations

from typing import Any

from memory.recall.sources import Doc, RecallSource
from memory.selectors import current_memories
from talorys.workspace.models import Note, Project, Task


def _memory_doc(memory: Any) -> Doc:
    return Doc(object_id=memory.pk, title="", body=memory.text, when=memory.updated_at)


def memory_sources() -> list[RecallSource]:
    return [
        RecallSource(
            kind="memories",
            live=current_memories,
            doc=_memory_doc,
            change_kind="memory",
            columns=("text", "updated_at"),
        ),
        RecallSource(
            kind="tasks",
            live=Task.objects.live,
            doc=lambda t: Doc(object_id=t.pk, title=t.title, body=t.details, when=t.updated_at),
            change_kind="task",
            columns=("title", "details", "updated_at"),
        ),
        RecallSource(
            kind="notes",
            live=Note.objects.live,
            doc=lambda n: Doc(object_id=n.pk, title=n.title, body=n.content, when=n.updated_at),
            change_kind="note",
            columns=("title", "content", "updated_at"),
        ),
        RecallSource(
            kind="projects",
            live=Project.objects.live,
            doc=lambda p: Doc(object_id=p.pk, title=p.name, body=p.description, when=p.updated_at),
            change_kind="project",
            columns=("name", "description", "updated_at"),
        ),
    ]
