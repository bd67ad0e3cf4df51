"""Every change to memories (memories.py; those that run the conflict check first: checked.py),
the owner's settling of a contradiction (contradictions.py), the checks of its fields
(checks.py) and the recall index (memory/recall/writer.py)."""

from memory.recall.writer import (
    ReindexReport,
    reindex,
    reindex_after_reply,
    reindex_items,
    reindex_recent,
)
from memory.services.checked import (
    Remembered,
    memory_correct_checked,
    memory_create_checked,
    memory_update_checked,
    remembered_note,
)
from memory.services.contradictions import memory_contradiction_keep, memory_contradiction_keep_both
from memory.services.memories import (
    MEMORY,
    clean_memory_text,
    memory_create_unchecked,
    memory_delete,
    memory_restore,
    memory_supersede,
    memory_update_unchecked,
)

__all__ = [
    "MEMORY",
    "ReindexReport",
    "Remembered",
    "clean_memory_text",
    "memory_contradiction_keep",
    "memory_contradiction_keep_both",
    "memory_correct_checked",
    "memory_create_unchecked",
    "memory_delete",
    "memory_create_checked",
    "memory_restore",
    "memory_update_checked",
    "memory_supersede",
    "memory_update_unchecked",
    "reindex",
    "remembered_note",
    "reindex_after_reply",
    "reindex_items",
    "reindex_recent",
]
