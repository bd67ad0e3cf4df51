"""How the demo files a fact the owner tells it, and what it says once the memory is stored: one
wording and one category per subject (talorys/lib/subjects.py), whichever way it was said, as a
careful model would. "I live in
Berlin", "I moved to Berlin" and "I'm living in Berlin now" are all "Lives in Berlin" (place);
"I started working at Acme" is "Works at Acme"; "I left Acme" is "No longer works at Acme";
"I left Acme and now work at Globex" is what holds now, "Works at Globex"; "I'm vegetarian" is
"Is vegetarian" and "I eat meat again" "Eats meat" (one diet at a time).
"""

from __future__ import annotations

import re
from typing import Any

from talorys.lib.subjects import SINGLE_VALUED, Subject, subject_of
from talorys.providers.demo.parse import capitalised
from talorys.providers.demo.turn import field

# The wording of each topic: the verb phrase (third person, bare), then the value.
_PHRASES = {"home": ("lives in", "live in"), "work": ("works at", "work at")}
_IRREGULAR = {"have": "has", "do": "does", "go": "goes"}
# Where a statement tells two things: "I left Acme and now work at Globex".
_JOINS = re.compile(r",?\s+(?:and|but)\s+|;\s*|,\s+(?=now\b)", re.I)


def fact_memory(statement: str) -> tuple[str, str]:
    """(text, category) of the memory for what the owner told."""
    statement = _holding_now(statement)
    subject = subject_of(statement)
    text = _worded(subject)
    if text is None:
        return capitalised(_first_person(statement)), "fact"
    # About someone else: a person; where the owner lives: a place; the rest: a fact.
    category = "person" if subject.whose else "place" if subject.topic == "home" else "fact"
    return capitalised(text), category


def remembered(data: dict[str, Any], arguments: dict[str, Any]) -> str:
    """The answer to the remember tool's result: stored, known already, replacing an older
    fact, or beside one that says otherwise (memory/conflict.py decides which)."""
    fact = field(data, "memory", "text") or arguments.get("text")
    if isinstance(data.get("already_known"), dict):
        return f"I already knew that: {data['already_known'].get('text')}"
    if isinstance(data.get("superseded"), dict):
        old = data["superseded"].get("text")
        return f"Got it: {fact}. That replaces what I had before ({old})."
    if isinstance(data.get("contradicts"), dict):
        old = data["contradicts"].get("text")
        return (
            f"I've noted: {fact}. But I also remember “{old}”, which says otherwise. "
            "Which one is right?"
        )
    return f"Got it. I'll remember that: {fact}"


def _holding_now(statement: str) -> str:
    """Of a change told in two parts about one single-valued subject ("I left Acme and now
    work at Globex"), the part that holds now; any other statement as it is."""
    parts = _JOINS.split(statement.strip())
    if len(parts) != 2:
        return statement
    later = parts[1] if re.match(r"^(?:i\b|i'|my\b)", parts[1], re.I) else f"I {parts[1]}"
    before, after = subject_of(parts[0]), subject_of(later)
    same = (before.topic, before.whose) == (after.topic, after.whose)
    return later if same and after.topic in SINGLE_VALUED and after.holds else statement


def _worded(subject: Subject) -> str | None:
    who = f"{subject.whose_text} " if subject.whose else ""
    if subject.topic in _PHRASES:
        third, bare = _PHRASES[subject.topic]
        if not subject.holds:
            third = f"no longer {third}" if subject.changed else f"does not {bare}"
        return f"{who}{third} {subject.value_text}"
    if subject.topic == "allergy":
        phrase = "allergic to" if subject.holds else "no longer allergic to"
        if not subject.holds and not subject.changed:
            phrase = "not allergic to"
        return f"{who}{'is ' if who else ''}{phrase} {subject.value_text}"
    if subject.topic == "name":
        return f"{who or ''}is called {subject.value_text}" if subject.holds else None
    if subject.topic == "diet":
        return _diet(subject, who)
    if subject.topic in ("phone", "email"):
        noun = "phone number" if subject.topic == "phone" else "email"
        return f"{who}{noun} is {subject.value_text}" if subject.holds else None
    return None


def _diet(subject: Subject, who: str) -> str:
    """ "eats meat" or "is vegetarian", held, no longer held, or not."""
    meat = subject.value == "meat"
    if subject.holds:
        return f"{who}{'eats' if meat else 'is'} {subject.value_text}"
    if subject.changed:
        return f"{who}{'no longer eats' if meat else 'is no longer'} {subject.value_text}"
    return f"{who}{'does not eat' if meat else 'is not'} {subject.value_text}"


def _first_person(statement: str) -> str:
    """A first-person statement the topics do not know, in the memory's third person:
    "I eat meat" -> "Eats meat", "I no longer eat meat" -> "No longer eats meat", "I'm
    vegetarian" -> "Is vegetarian"; anything else as it was said."""
    text = re.sub(r"^(?:remember(?:\s+that|:)\s+)", "", statement.strip(), flags=re.I)
    being = re.match(r"^i(?:'m| am)\s+(?P<rest>.+)$", text, re.I)
    if being is not None:
        return f"is {being.group('rest')}"
    match = re.match(
        r"^i\s+(?P<mod>no longer\s+|don't\s+|do not\s+|never\s+)?(?P<verb>[a-z]+)\b(?P<rest>.*)$",
        text,
        re.I,
    )
    if match is None:
        return text
    mod = (match.group("mod") or "").strip().lower()
    verb, rest = match.group("verb").lower(), match.group("rest")
    if mod in ("don't", "do not"):
        return f"does not {verb}{rest}"
    return f"{mod + ' ' if mod else ''}{_third(verb)}{rest}"


def _third(verb: str) -> str:
    if verb.endswith("ed") or verb in ("left", "quit", "got", "took", "began"):
        return verb  # told in the past: "Stopped eating meat"
    if verb in _IRREGULAR:
        return _IRREGULAR[verb]
    if verb.endswith(("s", "sh", "ch", "x", "o")):
        return verb + "es"
    if verb.endswith("y") and verb[-2:-1] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"
