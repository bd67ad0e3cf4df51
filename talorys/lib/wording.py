"""What a page shows of an error message: the field as the page labels it, in plain words.

The services and the API name fields as the API does ("title must not be empty.",
"model_base_url must start with http:// or https://.") and pass pydantic's wording through
("schedule.day: Input should be greater than or equal to 1"): clients and tests read those, and
they stay. A person reads the page, so every page turns a message through ``plain_parts``
before showing it: a leading field name becomes the page's label (or, without one, the name in
words), and pydantic's phrases become what to do. ``RULES`` is the one table of phrases; the
pages' scripts apply the same table (static/talorys/js/wording.js holds a copy, and
tests/lib/test_wording.py keeps the two equal).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

# (pattern, replacement) over what follows the field name, first match wins. JavaScript reads
# the same table: plain groups only, and ``$1`` in replacements.
RULES: list[list[str]] = [
    ["^Value error, ", ""],
    ["^Input should be greater than or equal to (\\S+?)\\.?$", "must be $1 or more"],
    ["^Input should be less than or equal to (\\S+?)\\.?$", "must be $1 or less"],
    ["^Input should be greater than (\\S+?)\\.?$", "must be more than $1"],
    ["^Input should be less than (\\S+?)\\.?$", "must be less than $1"],
    ["^Input should be a valid integer.*$", "must be a whole number"],
    ["^Input should be a valid number.*$", "must be a number"],
    ["^Input should be a valid (date|time|datetime|URL|email).*$", "is not a valid $1"],
    ["^String should have at most (\\d+) characters?\\.?$", "is longer than $1 characters"],
    ["^String should have at least 1 character\\.?$", "must not be empty"],
    ["^String should have at least (\\d+) characters\\.?$", "needs at least $1 characters"],
    ["^List should have at least 1 item.*$", "needs at least one choice"],
    ["^Field required\\.?$", "is missing: fill it in"],
    ["^Extra inputs are not permitted\\.?$", "is not something this form sets"],
    ["^Input should be (.+?)\\.?$", "must be $1"],
    ["^must not be empty\\.?$", "is empty: fill it in"],
    ["^is longer than (\\d+) characters\\.?$", "is longer than $1 characters: shorten it"],
    ["^must start with http:// or https://\\.?$", "must start with http:// or https://, e.g. http://localhost:11434/v1"],
]  # fmt: skip
# A message that names its field first: "title must…", "schedule.day: …", "text is longer…".
FIELD_FIRST = (
    "^([a-z][a-z0-9_]*(?:\\.[a-z0-9_]+)*)(?::\\s*|\\s+(?=(?:must|is|should|needs|cannot|can)\\b))"
)
# Where one message holds several, each naming its field (pydantic's, schedules.py's).
SEPARATOR = (
    "; (?=[a-z][a-z0-9_]*(?:\\.[a-z0-9_]+)*(?::|\\s+(?:must|is|should|needs|cannot|can)\\b))"
)
# What the chat socket puts before a refused frame's problems: the page says the problems.
LEAD = "^Invalid frame: "
# Words a field name spells out in capitals.
CAPITALS = {"url": "URL", "api": "API", "id": "ID", "ai": "AI"}

_COMPILED = [(re.compile(pattern), re.sub(r"\$(\d)", r"\\\1", repl)) for pattern, repl in RULES]
_FIELD_FIRST = re.compile(FIELD_FIRST)
_SEPARATOR = re.compile(SEPARATOR)
_LEAD = re.compile(LEAD)
_VERB = re.compile(r"^(must|is|needs|cannot|can|should)\b")


@dataclass(frozen=True)
class Part:
    """One problem of a message: the field it names (as the API names it; None when it names
    none) and the plain text a page shows."""

    field: str | None
    text: str


def field_words(name: str) -> str:
    """A field's name in words, for a field the page gave no label: "model_base_url" →
    "Model base URL", "due_at" → "Due", "project_id" → "Project"."""
    last = name.rsplit(".", 1)[-1]
    last = re.sub(r"_(id|at)$", "", last)
    words = [CAPITALS.get(word, word) for word in last.split("_") if word]
    text = " ".join(words) or name
    return text[:1].upper() + text[1:]


def plain_words(text: str) -> str:
    """``text`` (a message without its field) with pydantic's phrases put plainly."""
    text = text.strip()
    for pattern, replacement in _COMPILED:
        text = pattern.sub(replacement, text, count=1)
    return text


def _sentence(text: str) -> str:
    text = text.strip()
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "!", "?", "…")) else text + "."


def _other_fields(text: str, labels: Mapping[str, str]) -> str:
    """Other fields a message names after its first ("must not be after valid_to"), by their
    labels: only names with an underscore, which are never a word of a sentence."""
    for name in sorted((n for n in labels if "_" in n), key=len, reverse=True):
        text = re.sub(rf"\b{re.escape(name)}\b", labels[name], text)
    return text


def _part(message: str, labels: Mapping[str, str]) -> Part:
    match = _FIELD_FIRST.match(message)
    if match is None:
        return Part(None, _sentence(plain_words(message)))
    field = match.group(1)
    label = labels.get(field) or labels.get(field.rsplit(".", 1)[-1]) or field_words(field)
    rest = _other_fields(plain_words(message[match.end() :]), labels)
    if rest.lower().startswith(label.lower() + " "):  # "project_id: project 9 does not exist"
        return Part(field, _sentence(rest))
    if _VERB.match(rest):
        return Part(field, _sentence(f"{label} {rest}"))
    return Part(field, _sentence(f"{label}: {rest[:1].upper()}{rest[1:]}"))


def plain_parts(message: str, labels: Mapping[str, str] | None = None) -> list[Part]:
    """Each problem of ``message`` with the field it names and its plain text."""
    pieces = _SEPARATOR.split(_LEAD.sub("", message.strip()))
    return [_part(piece, labels or {}) for piece in pieces if piece.strip()]


def plain_message(message: str, labels: Mapping[str, str] | None = None) -> str:
    """``message`` as a page shows it: one sentence per problem."""
    return " ".join(part.text for part in plain_parts(message, labels))
