"""Every change to memories (memories.py; those that run the conflict check first: checked.py),
the owner's settling of a contradiction (contradictions.py), the checks of its fields
(checks.py) and the recall index (memory/recall/writer.py)."""

from memory.recall.writer import ReindexReport, reindex, reindex_after_reply, reindex_recent
from memory.services.checked import (
    Remembered,
    memory_correct,
    memory_remember,
    memory_revise,
    remembered_note,
)
from memory.services.contradictions import memory_contradiction_keep, memory_contradiction_keep_both
from memory.services.memories import (
    MEMORY,
    clean_memory_text,
    memory_create,
    memory_delete,
    memory_restore,
    memory_supersede,
    memory_update,
)

__all__ = [
    "MEMORY",
    "ReindexReport",
    "Remembered",
    "clean_memory_text",
    "memory_contradiction_keep",
    "memory_contradiction_keep_both",
    "memory_correct",
    "memory_create",
    "memory_delete",
    "memory_remember",
    "memory_restore",
    "memory_revise",
    "memory_supersede",
    "memory_update",
    "reindex",
    "remembered_note",
    "reindex_after_reply",
    "reindex_recent",
]
