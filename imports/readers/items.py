"""What the readers make of an export: conversations and notes, in this app's shapes."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from talorys.providers.base import without_nul

# A time before this, or after the far future, is not one an export means: left out.
EARLIEST = dt.datetime(1990, 1, 1, tzinfo=dt.UTC)
LATEST = dt.datetime(2200, 1, 1, tzinfo=dt.UTC)
# Epoch numbers past this are in milliseconds (Open WebUI's chat timestamps are).
MILLISECONDS_FROM = 100_000_000_000


@dataclass
class Turn:
    """One message of the branch kept: who said it, what, when."""

    external_id: str
    role: str  # "user" | "assistant"
    text: str
    when: dt.datetime | None = None


@dataclass
class Chat:
    external_id: str
    title: str
    created: dt.datetime | None
    updated: dt.datetime | None
    turns: list[Turn] = field(default_factory=list)


@dataclass
class VaultNote:
    external_id: str  # its path in the vault
    title: str
    content: str
    tags: list[str] = field(default_factory=list)
    when: dt.datetime | None = None


def instant(value: Any) -> dt.datetime | None:
    """An export's time as an aware datetime: epoch seconds (or milliseconds) or ISO 8601;
    None when it is missing or not a time."""
    try:
        if isinstance(value, bool):
            return None
        if isinstance(value, int | float):
            seconds = value / 1000 if value > MILLISECONDS_FROM else value
            when = dt.datetime.fromtimestamp(float(seconds), tz=dt.UTC)
        elif isinstance(value, str) and value:
            when = dt.datetime.fromisoformat(value)
            if when.tzinfo is None:
                when = when.replace(tzinfo=dt.UTC)
        else:
            return None
    except (ValueError, OverflowError, OSError):
        return None
    return when if EARLIEST <= when <= LATEST else None


def text_of(value: Any) -> str:
    """A string from the export, without NUL (PostgreSQL refuses it); "" for anything else."""
    return without_nul(value) if isinstance(value, str) else ""


@dataclass
class VaultFile:
    """A vault's file that is not a note (an image, a PDF): imported as one of the owner's files
    (files.services.file_create), which accepts or refuses it by its content."""

    path: str  # within the vault
    size: int  # as the zip's directory declares it (checked, archive.py)
    read: Callable[[], bytes]

    @property
    def external_id(self) -> str:
        return f"file:{self.path}"
