"""Reads of memories used by several callers (API, tools, context selection, search)."""

from __future__ import annotations

import re
from functools import reduce
from operator import or_

from django.db.models import Q, QuerySet

from memory.models import Memory, MemoryRevision
from talorys.lib.errors import NotFound
from talorys.lib.search import SearchHit, snippet


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
    """The "memories" kind of unified search (talorys.lib.search; registered in memory/apps.py)."""
    return [
        SearchHit(kind="memories", id=m.pk, title=m.text[:80], snippet=snippet(m.text, q))
        for m in memory_list(q=q)[:limit]
    ]


# --- selection for a turn's context --------------------------------------------------------------

MEMORY_LIMIT = 8
MAX_KEYWORDS = 12
MEMORY_CANDIDATES = 200

_WORD = re.compile(r"[^\W_]{3,}")
_STOPWORD_TEXT = (
    "the and for are but not you your yours with this that these those from have has had was "
    "were will would can could should what when where which who whom why how about into onto "
    "than then them they their there here our ours its his her hers him she all any some just "
    "also very much many more most please tell show give make let get got does did done want "
    "need like know today tomorrow yesterday"
)
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def _keywords(text: str) -> list[str]:
    seen: dict[str, None] = {}
    for word in _WORD.findall(text.lower()):
        if word not in _STOPWORDS:
            seen.setdefault(word)
    return list(seen)[:MAX_KEYWORDS]


def memory_select_for_turn(*, text: str, limit: int = MEMORY_LIMIT) -> list[str]:
    """Memories worth showing the model for this message: those sharing the most words with it,
    then the most recently changed. A keyword stand-in until semantic recall replaces it."""
    keywords = _keywords(text)
    chosen: dict[int, str] = {}
    if keywords:
        matches = (
            Memory.objects.live()
            .filter(reduce(or_, (Q(text__icontains=word) for word in keywords)))
            .order_by("-updated_at", "id")
            .values_list("id", "text")[:MEMORY_CANDIDATES]
        )
        # Most shared words first; sorted() keeps the most recent first among equals.
        chosen.update(
            sorted(matches, key=lambda row: -sum(word in row[1].lower() for word in keywords))[
                :limit
            ]
        )
    if len(chosen) < limit:
        recent = (
            Memory.objects.live()
            .exclude(pk__in=list(chosen))
            .order_by("-updated_at", "id")
            .values_list("id", "text")[: limit - len(chosen)]
        )
        chosen.update(recent)
    return list(chosen.values())
