"""The demo provider's memory conflict verdicts: deterministic, so the check runs with no model.

It answers what a model would for the plain cases, in the model's JSON shape
(memory/conflict.py reads both alike), from each statement's subject (talorys/lib/subjects.py):
- the same words (up to order, case and a trailing "s"), or the same subject with the same
  value ("Lives in Lisbon" / "I'm living in Lisbon now") → ``duplicate``;
- the same subject with another value ("Lives in Berlin" / "Moved to Lisbon"), or a change of
  the same one ("Works at Acme" / "I left Acme", "Allergic to peanuts" / "No longer allergic to
  peanuts") → ``updates`` (the new one holds now);
- the same statement with a plain negation ("Likes coffee" / "Does not like coffee"): not said
  to be a change → ``contradicts``;
- anything else → ``unrelated``.
Candidates are read nearest first; the first that decides wins.
"""

from __future__ import annotations

from typing import Any

from talorys.lib.subjects import SINGLE_VALUED, Subject, same_subject, same_value, subject_of, words


def _about(new: Subject, old: Subject) -> tuple[str, str] | None:
    """(verdict, reason) for two statements of the same subject, or None: they are not."""
    if not same_subject(new, old):
        return None
    if new.holds == old.holds:
        if same_value(new, old):
            return "duplicate", f"The same {new.topic}."
        if new.topic in SINGLE_VALUED and new.holds:
            return "updates", f"A newer statement about the same {new.topic}."
        return None
    if new.topic in SINGLE_VALUED and not new.holds and not same_value(new, old):
        return None  # "I left Acme" says nothing of "Works at Globex"
    if new.changed or old.changed or new.topic in SINGLE_VALUED:
        return "updates", f"A change of the same {new.topic}."
    return "contradicts", "The same statement, negated."


def demo_verdict(new_text: str, candidates: list[tuple[int, str]]) -> dict[str, Any]:
    """``candidates``: (id, text) of the memories the check found, nearest first."""
    new_words = words(new_text)
    for memory_id, text in candidates:
        if words(text) == new_words:
            return {"verdict": "duplicate", "memory_id": memory_id, "reason": "Same words."}
    new = subject_of(new_text)
    for memory_id, text in candidates:
        found = _about(new, subject_of(text))
        if found is not None:
            return {"verdict": found[0], "memory_id": memory_id, "reason": found[1]}
    return {"verdict": "unrelated", "memory_id": None, "reason": "No memory says the same."}
