"""Input and output schemas of the memory API and of search (/api/search)."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any

from ninja import Schema
from pydantic import ConfigDict, Field, field_validator, model_validator

from memory.conflict import VerdictKind
from memory.models import Memory
from memory.recall.engine import Mode as RecallMode
from memory.recall.sources import FORMER_NAMES, recall_kinds
from talorys.lib.search import QUERY_MAX
from talorys.web.schemas import (
    LIST_LIMIT_MAX,
    NOT_NULL,
    NOT_WHITESPACE,
    BoundedDate,
    ExpectedVersion,
    In,
    QueryText,
    one_of,
)


class MemoryIn(In):
    text: str = Field(min_length=1, max_length=Memory.TEXT_MAX)
    category: Memory.Category = Memory.Category.FACT
    valid_from: BoundedDate | None = Field(None, description="Since when the fact holds.")
    valid_to: BoundedDate | None = Field(None, description="Until when the fact holds.")

    @model_validator(mode="after")
    def _ordered(self) -> MemoryIn:
        if self.valid_from and self.valid_to and self.valid_from > self.valid_to:
            raise ValueError("valid_from must not be after valid_to")
        return self


class MemoryPatch(In):
    # Either may be left out, never null (_not_null): the schema says a text and a category.
    text: Annotated[str | None, NOT_NULL] = Field(None, min_length=1, max_length=Memory.TEXT_MAX)
    category: Annotated[Memory.Category | None, one_of(Memory.Category)] = None
    # null clears a date (unknown); leaving it out keeps it.
    valid_from: BoundedDate | None = None
    valid_to: BoundedDate | None = None
    # null: current again (no longer superseded). Only null is accepted: superseding is the
    # conflict check's, or a revert's.
    superseded_by: None = None
    version: ExpectedVersion = None

    @field_validator("text", "category")
    @classmethod
    def _not_null(cls, value: object) -> object:
        # Runs only for fields the client sent: leaving a field out keeps it, null cannot clear it.
        if value is None:
            raise ValueError("cannot be null; leave the field out to keep it")
        return value


class MemoryOut(Schema):
    id: int
    text: str
    category: str
    source: str
    valid_from: dt.date | None
    valid_to: dt.date | None
    superseded_by: int | None = Field(None, alias="superseded_by_id")
    superseded_at: dt.datetime | None
    contradicts: int | None = Field(None, alias="conflicts_with_id")
    created_at: dt.datetime
    updated_at: dt.datetime
    version: int


class ConflictCheckOut(Schema):
    """What the conflict check found when the memory was written (memory/conflict.py)."""

    verdict: VerdictKind = Field(
        description="duplicate: nothing new was stored (the memory returned is the one that "
        "already said it); updates: the memory returned supersedes memory_id; contradicts: both "
        "are kept and marked for the owner to settle; unrelated: stored as given."
    )
    memory_id: int | None = Field(
        None, description="The other memory: the duplicate, the superseded or the contradicted."
    )
    checked: bool = Field(description="False: the check failed (both are kept, unmarked).")
    reason: str = ""


class MemoryWriteOut(MemoryOut):
    """A memory the owner added or edited, with what the conflict check found."""

    conflict_check: ConflictCheckOut


class MemoryFilters(Schema):
    q: QueryText | None = Field(None, max_length=QUERY_MAX)
    superseded: bool = Field(False, description="List the superseded memories instead.")


class MemoryRevisionOut(Schema):
    """One change and its provenance: who (``actor``), from which turn, and when."""

    id: int
    action: str
    text: str
    category: str
    source: str
    valid_from: dt.date | None
    valid_to: dt.date | None
    superseded_by: int | None
    actor: str
    conversation_id: int | None
    message_id: int | None
    created_at: dt.datetime


def _known_kinds(schema: dict[str, Any]) -> None:
    """The schema's pattern for ``kinds``: commas between recall's kinds (read when the schema is
    made, so every registered source is in it), spaces and empty items allowed, as the API
    reads it; an unknown kind is refused."""
    kind = "(" + "|".join([*recall_kinds(), *FORMER_NAMES]) + ")"
    schema["pattern"] = rf"^\s*({kind}\s*)?(,\s*({kind}\s*)?)*$"


class SearchQuery(Schema):
    model_config = ConfigDict(str_strip_whitespace=True)

    q: QueryText = Field(
        min_length=1, max_length=QUERY_MAX, json_schema_extra={"pattern": NOT_WHITESPACE}
    )
    kinds: Annotated[str, Field(max_length=200, json_schema_extra=_known_kinds)] | None = Field(
        None,
        description="Comma-separated: memory, task, note, project, automation, message, file "
        "(the plural names are read as these)",
    )
    limit: int = Field(20, ge=1, le=LIST_LIMIT_MAX)


class SearchFileOut(Schema):
    """Where a hit of kind ``file`` (a passage; its ``id`` is the passage's) is."""

    id: int = Field(description="The file's id")
    name: str
    page: int | None = Field(None, description="The passage's page (a PDF's, from 1)")
    heading: str = Field("", description="The heading the passage is under")
    url: str = Field(description="The file's content at the passage's page")


class SearchHitOut(Schema):
    kind: str
    id: int
    title: str
    snippet: str
    score: float
    conversation_id: int | None = Field(None, description="A message's conversation")
    file: SearchFileOut | None = Field(None, description="A file passage's file and page")

    @staticmethod
    def resolve_file(hit: Any) -> dict[str, Any] | None:
        return hit.details if hit.kind == "file" else None


class SearchOut(Schema):
    items: list[SearchHitOut]
    count: int
    mode: RecallMode
    # Set when vector recall is on but failed for this query (the keyword ranking stands).
    error: str = ""
