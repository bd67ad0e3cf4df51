"""Unified search across kinds. Each kind registers a searcher; apps register theirs when they
load (memories from memory/), so core needs no import of the apps above it. The memory issue may
swap a searcher for a semantic one under the same kind name.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypedDict

from talorys.lib.errors import ValidationFailed


class SearchHit(TypedDict):
    kind: str
    id: int
    title: str
    snippet: str


# The longest search or filter text the API and the tools accept.
QUERY_MAX = 200


Searcher = Callable[[str, int], list[SearchHit]]
_SEARCHERS: dict[str, Searcher] = {}


def register_searcher(kind: str, searcher: Searcher) -> None:
    _SEARCHERS[kind] = searcher


def search_kinds() -> list[str]:
    return sorted(_SEARCHERS)


def snippet(text: str, q: str, width: int = 160) -> str:
    """A window of ``text`` around the first match of ``q``."""
    text = " ".join(text.split())
    at = text.lower().find(q.lower())
    if at < 0:
        return text[:width]
    start = max(0, at - width // 3)
    piece = text[start : start + width]
    return ("…" if start else "") + piece + ("…" if start + width < len(text) else "")


def search(*, q: str, kinds: Sequence[str] | None = None, limit: int = 20) -> list[SearchHit]:
    q = q.strip()
    if not q:
        return []
    wanted = kinds or search_kinds()
    unknown = [k for k in wanted if k not in _SEARCHERS]
    if unknown:
        raise ValidationFailed(
            f"Unknown kinds: {', '.join(unknown)}. Known: {', '.join(search_kinds())}."
        )
    hits: list[SearchHit] = []
    for kind in wanted:
        hits.extend(_SEARCHERS[kind](q, limit))
    return hits[: limit * len(wanted)]
