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
            kind="memory",
            live=current_memories,
            doc=_memory_doc,
            logged=True,
            columns=("text", "updated_at"),
        ),
        RecallSource(
            kind="task",
            live=Task.objects.live,
            doc=lambda t: Doc(object_id=t.pk, title=t.title, body=t.details, when=t.updated_at),
            logged=True,
            columns=("title", "details", "updated_at"),
        ),
        RecallSource(
            kind="note",
            live=Note.objects.live,
            doc=lambda n: Doc(object_id=n.pk, title=n.title, body=n.content, when=n.updated_at),
            logged=True,
            columns=("title", "content", "updated_at"),
        ),
        RecallSource(
            kind="project",
            live=Project.objects.live,
            doc=lambda p: Doc(object_id=p.pk, title=p.name, body=p.description, when=p.updated_at),
            logged=True,
            columns=("name", "description", "updated_at"),
        ),
    ]
