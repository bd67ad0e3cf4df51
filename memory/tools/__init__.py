"""The memory app's model tools: memories (memories.py), and search backed by recall
(search.py: the unified ``search``, and ``search_tasks``/``search_notes`` replaced in place).
Registered when the app loads (apps.py imports this package)."""

from memory.tools import memories, search

__all__ = ["memories", "search"]
