"""Input and output schemas of the memory API."""

from __future__ import annotations

import datetime as dt

from ninja import Schema
from pydantic import Field, field_validator

from memory.models import Memory
from talorys.lib.schemas import In


class MemoryIn(In):
    text: str = Field(min_length=1, max_length=Memory.TEXT_MAX)
    category: Memory.Category = Memory.Category.FACT


class MemoryPatch(In):
    text: str | None = Field(None, min_length=1, max_length=Memory.TEXT_MAX)
    category: Memory.Category | None = None

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
    created_at: dt.datetime
    updated_at: dt.datetime


class MemoryRevisionOut(Schema):
    id: int
    action: str
    text: str
    category: str
    source: str
    created_at: dt.datetime
