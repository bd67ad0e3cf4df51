"""Reads of memories used by several callers (API, tools, context selection, search)."""

from __future__ import annotations

from django.db.models import QuerySet

from memory.models import Memory, MemoryRevision
from talorys.errors import NotFound
from talorys.search import SearchHit, snippet


def memory_get(*, memory_id: int) -> Memory:
    memory = Memory.objects.live().filter(pk=memory_id).first()
    if memory is None:
        raise NotFound(f"Memory {memory_id} does not exist.")
    return memory


def memory_list(*, q: str | None = None) -> QuerySet[Memory]:
    """Live memories, most recently changed first; ``q`` keeps those whose text contains it."""
    memories = Memory.objects.live()
    if q and q.strip():
        memories = memories.filter(text__icontains=q.strip())
    return memories


def memory_history(*, memory_id: int) -> QuerySet[MemoryRevision]:
    """The memory's revisions, newest first. Raises NotFound for a memory that is gone."""
    memory = memory_get(memory_id=memory_id)
    return memory.revisions.order_by("-created_at", "-id")


def memory_search_hits(q: str, limit: int) -> list[SearchHit]:
    """The "memories" kind of unified search (talorys.search; registered in memory/apps.py)."""
    return [
        SearchHit(kind="memories", id=m.pk, title=m.text[:80], snippet=snippet(m.text, q))
        for m in memory_list(q=q)[:limit]
    ]
