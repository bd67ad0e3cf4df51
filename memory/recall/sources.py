"""The kinds recall indexes. Each registers once, from the app that owns the model.

A source says which of its rows are recallable now (``live``: not in the bin, not superseded,
not a reply still streaming), how a row reads as a document, and which rows changed since an
instant, with when (``changed_since``, for the lazy pass; the catch-up compares everything).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

from talorys.lib.errors import ValidationFailed


@dataclass(frozen=True)
class Doc:
    object_id: int
    title: str  # weighted above the body (BM25F); "" where the title is the text itself
    body: str
    parent_id: int | None = None  # a message's conversation (its turns are ordered by id)
    # When the item said what it says (ranking prefers the newer of two close matches).
    when: dt.datetime | None = None
    label: str = ""  # what a hit is called when the title is empty (a memory's text)


@dataclass(frozen=True)
class RecallSource:
    kind: str  # as the bin, the change log and the hits name it: "memory", "task", ...
    live: Callable[[], QuerySet[Any]]
    doc: Callable[[Any], Doc]
    # What changed since an instant: the change log (under ``kind``) for a kind whose services
    # record every change there (read for all such kinds in one query), or a function.
    logged: bool = False
    changed_since: Callable[[dt.datetime], dict[int, dt.datetime]] | None = None
    # Columns enough for ``doc`` (loaded with .only()), so the catch-up reads no more.
    columns: tuple[str, ...] = ()
    # What a hit of this kind carries besides its text, by id, for a page of hits at once (a
    # file's passage: its file and page, files/selectors.py); None: nothing more. An "id" in
    # them is the item the hit is named by where the model reads it (the file, not the passage).
    details: Callable[[list[int]], dict[int, dict[str, Any]]] | None = None

    def docs(self, ids: set[int] | None = None) -> Iterator[Doc]:
        rows = self.live()
        if ids is not None:
            rows = rows.filter(pk__in=ids)
        if self.columns:
            rows = rows.only(*self.columns)
        for row in rows.order_by("pk").iterator(chunk_size=2000):
            yield self.doc(row)

    def live_pks(self, ids: set[int]) -> QuerySet[Any]:
        """Which of ``ids`` are recallable now, as a subquery (recall's hits read their entries
        through it: one statement for the check and the text)."""
        # No ordering: a model's default one only costs the database a sort here.
        return self.live().filter(pk__in=ids).order_by().values("pk")


_SOURCES: dict[str, RecallSource] = {}


def register_source(source: RecallSource) -> None:
    _SOURCES[source.kind] = source


def sources() -> list[RecallSource]:
    return list(_SOURCES.values())


def source(kind: str) -> RecallSource:
    return _SOURCES[kind]


def recall_kinds() -> list[str]:
    return sorted(_SOURCES)


# The plural names /api/search and its hits used before recall named its kinds as the bin and
# the change log do: still accepted, read as the one name.
FORMER_NAMES = {
    "memories": "memory",
    "tasks": "task",
    "notes": "note",
    "projects": "project",
    "automations": "automation",
    "messages": "message",
    "files": "file",
}


def check_kinds(kinds: list[str] | None) -> list[str] | None:
    """``kinds`` by their one name (``FORMER_NAMES`` read as it), deduplicated, or
    ValidationFailed naming the unknown ones."""
    if not kinds:
        return None
    kinds = [FORMER_NAMES.get(kind, kind) for kind in kinds]
    unknown = [kind for kind in kinds if kind not in _SOURCES]
    if unknown:
        raise ValidationFailed(
            f"Unknown kinds: {', '.join(unknown)}. Known: {', '.join(recall_kinds())}."
        )
    return list(dict.fromkeys(kinds))
