"""The recall sources memory registers: memories, and the workspace's tasks, notes and projects
(below memory, so it registers them). Agent registers messages and automations registers
automations from their own apps (memory imports neither)."""

from __future__ import annotations

from typing import Any

from memory.recall.sources import Doc, RecallSource
from memory.selectors import current_memories
from talorys.workspace.models import Note, Project, Task


def _workspace_source(kind: str, model: Any, title: str, body: str) -> RecallSource:
    """A workspace kind: its ``title`` and ``body`` columns, as of its last change."""
    return RecallSource(
        kind=kind,
        live=model.objects.live,
        doc=lambda row: Doc(row.pk, getattr(row, title), getattr(row, body), when=row.updated_at),
        logged=True,
        columns=(title, body, "updated_at"),
    )


def memory_sources() -> list[RecallSource]:
    return [
        RecallSource(
            kind="memory",
            live=current_memories,
            doc=lambda m: Doc(object_id=m.pk, title="", body=m.text, when=m.updated_at),
            logged=True,
            columns=("text", "updated_at"),
        ),
        _workspace_source("task", Task, "title", "details"),
        _workspace_source("note", Note, "title", "content"),
        _workspace_source("project", Project, "name", "description"),
    ]
