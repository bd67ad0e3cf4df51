"""The checks of a memory's fields, shared by every change to memories (memories.py)."""

from __future__ import annotations

import datetime as dt

from memory.models import Memory
from talorys.lib.errors import field_refused
from talorys.lib.validation import long_text, refuse_nul


def clean_memory_text(text: str | None) -> str:
    # Long text as every app keeps it (talorys/lib/validation.py): LF and TAB, no other control.
    text = long_text(refuse_nul(text or "", field="text")).strip()
    if not text:
        raise field_refused("text must not be empty.", field="text")
    if len(text) > Memory.TEXT_MAX:
        raise field_refused(
            f"text is longer than {Memory.TEXT_MAX} characters; keep a memory to one fact "
            "and put longer text in a note.",
            field="text",
        )
    return text


def check_choice(value: str, *, field: str, choices: list[str]) -> str:
    if value not in choices:
        raise field_refused(f"{field} must be one of {', '.join(choices)}.", field=field)
    return str(value)


def check_validity(valid_from: dt.date | None, valid_to: dt.date | None) -> None:
    if valid_from and valid_to and valid_from > valid_to:
        raise field_refused("valid_from must not be after valid_to.", field="valid_from")
