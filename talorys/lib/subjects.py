"""What a short statement about the owner is about, so that a later statement of the same
subject is recognised whatever words and category it comes with.

A small rule-based classifier shared by the conflict check (memory/conflict.py: the owner's
memories about the same subject are always among its candidates, even with keyword-only recall)
and the demo model (talorys/providers/demo/facts.py files a fact in one wording per subject;
demo/verdicts.py gives its verdicts from it).

A subject is a topic, whose it is (the owner's: "", or "sister ana"), the value the statement
gives and whether it still holds ("I no longer live in Berlin", "I left Acme": it does not,
and ``changed`` says the words told of a change rather than a plain "not"). Topics are
single-valued (one home, one employer, one name at a time: another value is a newer statement
of the same subject) or multi-valued (allergies, and every other statement, whose subject is
its own words: "allergic to peanuts" and "allergic to cats" are two subjects).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SINGLE_VALUED = frozenset(["home", "work", "name", "phone", "email", "diet"])

_WHO = r"(?P<who>(?:[^\s]+\s+){0,3}?)"  # at most a few words before the verb: "my sister ana"
_BE = r"(?:(?:am|is|are|'m|'s)\s+)?(?:(?:have|has|'ve)\s+)?(?:just\s+|also\s+|still\s+|now\s+)?"
_VALUE = r"(?P<value>.+)"
# (topic, holds, pattern), the first match wins.
_TOPICS: list[tuple[str, bool, str]] = [
    ("name", True, rf"^(?:my\s+)?name\s+is\s+{_VALUE}$"),
    ("name", True, rf"^(?:i'm|i\s+am|is)\s+called\s+{_VALUE}$"),
    ("name", True, rf"^call\s+me\s+{_VALUE}$"),
    ("name", True, rf"^the\s+name\s+of\s+(?P<who>.+?)\s+is\s+{_VALUE}$"),
    ("name", True, rf"^(?P<who>.+?)(?:'s\s+name\s+is|\s+is\s+(?:called|named))\s+{_VALUE}$"),
    ("phone", True, rf"^{_WHO}(?:phone|mobile|cell)(?:\s+number)?(?:\s+is|:)\s+{_VALUE}$"),
    ("email", True, rf"^{_WHO}e-?mail(?:\s+address)?(?:\s+is|:)\s+{_VALUE}$"),
    ("allergy", True, rf"^{_WHO}{_BE}allergic\s+to\s+{_VALUE}$"),
    ("allergy", True, rf"^{_WHO}{_BE}(?:an?\s+)?allergy\s+to\s+{_VALUE}$"),
    (
        "work",
        True,
        rf"^{_WHO}{_BE}(?:started\s+|began\s+)?(?:work(?:s|ed|ing)?|employed)\s+"
        rf"(?:at|for|by|with)\s+{_VALUE}$",
    ),
    (
        "work",
        True,
        rf"^{_WHO}{_BE}(?:started|got|took)\s+a\s+(?:new\s+)?job\s+(?:at|with)\s+{_VALUE}$",
    ),
    ("work", True, rf"^{_WHO}{_BE}joined\s+{_VALUE}$"),
    ("work", True, rf"^{_WHO}(?:job|employer)\s+is\s+(?:at\s+|with\s+)?{_VALUE}$"),
    (
        "work",
        False,
        rf"^{_WHO}{_BE}(?:left|quit)\s+(?:(?:my|the|a|his|her)\s+job\s+(?:at|with)\s+)?{_VALUE}$",
    ),
    (
        "home",
        True,
        rf"^{_WHO}{_BE}(?:live[sd]?|living|reside[sd]?|residing|based|moved|moving|"
        rf"relocated|relocating)\s+(?:back\s+)?(?:(?:to|in|at|near|into)\s+)?{_VALUE}$",
    ),
    ("home", True, rf"^{_WHO}home\s+is\s+(?:now\s+)?(?:in\s+)?{_VALUE}$"),
    # One diet at a time: "I'm vegetarian", then "I eat meat again", is a change of it.
    ("diet", True, rf"^{_WHO}{_BE}(?:an?\s+)?(?P<value>(?:vegetarian|vegan|pescatarian)\b.*)$"),
    ("diet", True, rf"^{_WHO}{_BE}(?:eats?|eating)\s+(?P<value>meat\b.*)$"),
]
_COMPILED = [(topic, holds, re.compile(p, re.IGNORECASE)) for topic, holds, p in _TOPICS]

# "no longer", "not ... anymore", "stopped", "used to": the statement tells of a change.
_CHANGE = re.compile(
    r"\bno\s+longer\s+|\b(?:have\s+|has\s+|'ve\s+)?stopped\s+|\bused\s+to\s+", re.I
)
_ANYMORE = re.compile(r",?\s+any\s?more\b", re.I)
_NEGATION = re.compile(
    r"\b(?:do|does|did)\s+not\s+|\b(?:don't|doesn't|didn't|dont|doesnt|didnt)\s+|\bnot\s+|"
    r"\bnever\s+",
    re.I,
)
_NEGATED_BE = re.compile(r"\b(?:isn't|aren't|wasn't)\s+", re.I)
# When, not what: cut from the end of a value ("Lisbon since 2020", "Acme last spring").
_WHEN = re.compile(
    r"(?:,?\s+(?:now|these\s+days|nowadays|recently|again|for\s+good|for\s+now|today|"
    r"yesterday|since\s+.+|as\s+of\s+.+|last\s+\w+|this\s+\w+|next\s+\w+|in\s+\d{4}|"
    r"(?:a|\w+)\s+(?:few\s+)?(?:days?|weeks?|months?|years?)\s+ago))+$",
    re.I,
)
_LEAD = re.compile(r"^(?:remember(?:\s+that|:)|note(?:\s+that|:)|fyi,?|please,?|btw,?)\s+", re.I)
_OWNER_WORDS = frozenset(
    ["i", "i'm", "im", "am", "is", "are", "me", "my", "mine", "the", "owner", "owner's"]
    + ["has", "have", "i've", "'ve", "just", "also", "still", "now", "new", "current"]
)
_WORD = re.compile(r"[^\W_]+")
FILLER = frozenset(
    ["i", "im", "my", "me", "the", "a", "an", "to", "in", "at", "of", "and", "is", "am", "are"]
    + ["was", "be", "that", "now", "do", "doe", "does"]
)


@dataclass(frozen=True)
class Subject:
    topic: str  # one of the topics above, or "statement": the statement's own words
    whose: str  # "" for the owner's own; else lowercased ("sister ana")
    value: str  # lowercased, without the when ("lisbon")
    holds: bool = True
    changed: bool = False  # "no longer", "stopped", "left": a change, not a plain "not"
    whose_text: str = ""  # as written, for the demo's wording
    value_text: str = ""

    @property
    def words(self) -> frozenset[str]:
        return words(self.value)


def words(text: str) -> frozenset[str]:
    """Content words, lowercased, without a plural or third-person "s" or an "-ing"."""
    found = {_stem(w) for w in _WORD.findall(text.lower().replace("'", ""))}
    return frozenset(found - FILLER)


def _stem(word: str) -> str:
    word = word.removesuffix("s")
    return word[:-3] if len(word) > 5 and word.endswith("ing") else word


def subject_of(statement: str) -> Subject:
    text = _LEAD.sub("", re.sub(r"\s+", " ", statement.replace("’", "'")).strip(" .!?"))
    text, changes = _CHANGE.subn("", text)
    text, anymore = _ANYMORE.subn("", text)
    text, plain = _NEGATION.subn("", text)
    text, negated_be = _NEGATED_BE.subn("is ", text)
    changed = bool(changes or anymore)
    holds = not (changed or plain or negated_be)
    for topic, topic_holds, pattern in _COMPILED:
        match = pattern.match(text)
        if match is None:
            continue
        groups = match.groupdict()
        who = " ".join(
            w for w in (groups.get("who") or "").split() if w.lower() not in _OWNER_WORDS
        )
        who = re.sub(r"'s$", "", who)
        value = _WHEN.sub("", groups["value"]).strip(" ,.")
        value = re.sub(r"^(?:the|a|an)\s+", "", value, flags=re.I)
        if not value:
            break
        return Subject(
            topic=topic,
            whose=who.lower(),
            value=value.lower(),
            holds=holds and topic_holds,
            changed=changed or not topic_holds,
            whose_text=who,
            value_text=value,
        )
    rest = _WHEN.sub("", text).strip(" ,.")
    return Subject(
        topic="statement",
        whose="",
        value=rest.lower(),
        holds=holds,
        changed=changed,
        value_text=rest,
    )


def same_subject(a: Subject, b: Subject) -> bool:
    """About the same thing: the same topic of the same person, and for a multi-valued topic
    the same value (one's words within the other's: "eats meat" / "eats meat every day")."""
    if (a.topic, a.whose) != (b.topic, b.whose):
        return False
    if a.topic in SINGLE_VALUED:
        return True
    return bool(a.words and b.words) and (a.words <= b.words or b.words <= a.words)


def same_value(a: Subject, b: Subject) -> bool:
    if a.topic in SINGLE_VALUED:
        return words(a.value) == words(b.value)
    return a.words == b.words
