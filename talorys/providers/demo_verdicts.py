"""The demo provider's memory conflict verdicts: deterministic, so the check runs with no model.

It answers what a model would for the plain cases, in the model's JSON shape
(memory/conflict.py reads both alike):
- the same words (up to order, case and a trailing "s") → ``duplicate``;
- the same words but for a negation ("likes coffee" / "does not like coffee") → ``contradicts``;
- both about the same slot of the same person's life (where they live or work, a phone number
  or email) and saying different things → ``updates`` (the new one holds now);
- anything else → ``unrelated``.
"""

from __future__ import annotations

import re
from typing import Any

_WORD = re.compile(r"[^\W_]+")
_FILLER = frozenset(
    [
        "i",
        "im",
        "my",
        "me",
        "the",
        "a",
        "an",
        "to",
        "in",
        "at",
        "of",
        "and",
        "is",
        "am",
        "are",
        "was",
        "be",
        "that",
        "now",
        "do",
        "doe",
    ]
)
_NEGATIONS = frozenset(
    ["not", "no", "never", "dont", "doesnt", "isnt", "arent", "wasnt", "didnt", "cant", "wont"]
)
# Slots of the owner's life where a new statement replaces the old one.
_SLOTS = {
    "home": re.compile(
        r"\b(live[sd]?|living|moved?|moving|relocat\w*|based in|home is|reside\w*)\b"
    ),
    "work": re.compile(r"\b(works?|working|job|employ\w*|employer)\b"),
    "phone": re.compile(r"\b(phone|mobile|cell)\b"),
    "email": re.compile(r"\b(e-?mail)\b"),
}


def _words(text: str) -> set[str]:
    words = {w.removesuffix("s") for w in _WORD.findall(text.lower().replace("'", ""))}
    return words - _FILLER


def _slot(text: str) -> tuple[str, frozenset[str]] | None:
    """The slot a statement is about and whose it is (the words before it: none for the
    owner's own, "sister ana" for "Sister Ana lives in Porto")."""
    lowered = text.lower()
    for name, pattern in _SLOTS.items():
        match = pattern.search(lowered)
        if match is not None:
            return name, frozenset(_words(lowered[: match.start()]))
    return None


def demo_verdict(new_text: str, candidates: list[tuple[int, str]]) -> dict[str, Any]:
    """``candidates``: (id, text) of the nearest existing memories, nearest first."""
    new_words = _words(new_text)
    for memory_id, text in candidates:
        old_words = _words(text)
        if old_words == new_words:
            return {"verdict": "duplicate", "memory_id": memory_id, "reason": "Same words."}
        differ = old_words ^ new_words
        if differ and differ <= _NEGATIONS:
            return {
                "verdict": "contradicts",
                "memory_id": memory_id,
                "reason": "The same statement, negated.",
            }
    slot = _slot(new_text)
    if slot is not None:
        for memory_id, text in candidates:
            if _slot(text) == slot:
                return {
                    "verdict": "updates",
                    "memory_id": memory_id,
                    "reason": f"A newer statement about the same {slot[0]}.",
                }
    return {"verdict": "unrelated", "memory_id": None, "reason": "No memory says the same."}
