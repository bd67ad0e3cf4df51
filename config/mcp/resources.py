"""The owner's data as MCP resources, so a client can attach it as context: the current
memories (one document) and each live note. Any token may read them: both scopes may read."""

from __future__ import annotations

import re

import mcp.types as types

from memory.selectors import current_memories
from talorys.workspace.models import Note

MEMORIES_URI = "talorys://memories"
NOTE_URI = "talorys://notes/{id}"
MIME_TYPE = "text/markdown"
NOTES_LISTED = 200  # the newest notes listed; any live note can be read by its URI
MEMORIES_SHOWN = 1000  # the newest current memories in the memories document
# A note's URI: its id in ASCII digits, at most a row id's 19 (str.isdigit also takes "²" and
# other digits int() refuses, and a number past the column's range fails in the database).
_NOTE_URI = re.compile(r"talorys://notes/([1-9][0-9]{0,18})")
_ID_MAX = 2**63 - 1


def resources_list() -> list[types.Resource]:
    """The memories document, then the newest live notes."""
    memories = types.Resource(
        uri=MEMORIES_URI,
        name="Memories",
        description="What Talorys currently remembers about the owner, one fact a line.",
        mime_type=MIME_TYPE,
    )
    return [memories] + [
        types.Resource(
            uri=NOTE_URI.format(id=note.pk),
            name=note.title,
            description=f"Note {note.pk}, updated {note.updated_at:%Y-%m-%d}.",
            mime_type=MIME_TYPE,
        )
        for note in Note.objects.live().order_by("-updated_at", "-id")[:NOTES_LISTED]
    ]


def resource_read(uri: str) -> str | None:
    """The text of one resource, or None when there is no such resource (or note)."""
    if uri == MEMORIES_URI:
        memories = current_memories().order_by("-id")[:MEMORIES_SHOWN]
        lines = [f"- ({memory.category}) {memory.text}" for memory in memories]
        return "# Memories\n\n" + ("\n".join(lines) if lines else "(none yet)") + "\n"
    match = _NOTE_URI.fullmatch(uri)
    if match is not None and int(match[1]) <= _ID_MAX:
        note = Note.objects.live().filter(pk=int(match[1])).first()
        if note is not None:
            return f"# {note.title}\n\n{note.content}\n"
    return None
