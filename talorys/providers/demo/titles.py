"""A demo conversation's title, given when the owner's first message makes it
(agent/services.first_title): a few words for the request the demo understands ("Add task: buy
milk", "Remember: lives in Berlin", "Open tasks"), or for anything else the owner's first words,
held to about TITLE_CHARS characters at a word boundary, without trailing punctuation."""

from __future__ import annotations

import re

from talorys.providers.demo.choosing import named
from talorys.providers.demo.facts import fact_memory
from talorys.providers.demo.parse import parse_request
from talorys.providers.demo.workspace import note_arguments

TITLE_CHARS = 40
_LABELS = {
    "create_task": "Add task",
    "timed_reminder": "Reminder",
    "remember": "Remember",
    "tell_fact": "Remember",
    "delete_task": "Delete task",
    "complete_task": "Done",
    "create_note": "New note",
}
_TRAILING = re.compile(r"[\s.,;:!?…\-–—\"'“”‘’«»(]+$")


def demo_title(text: str) -> str:
    """The title of a conversation the owner began with ``text``."""
    request = parse_request(text)
    if request is None:
        return _held(text)
    if request.intent == "list_tasks":
        return "Open tasks"
    what = named(request)
    if request.intent in ("remember", "tell_fact"):
        fact = fact_memory(request.what)[0]
        what = fact[:1].lower() + fact[1:]
    elif request.intent == "create_note":
        what = note_arguments(request.what)["title"]
    return _held(f"{_LABELS[request.intent]}: {what}")


def _held(text: str) -> str:
    """One line of at most TITLE_CHARS characters, cut at a word boundary when a word allows,
    without trailing punctuation; "New conversation" for no words at all."""
    line = " ".join(text.split()).lstrip("\"'“‘«")
    if len(line) > TITLE_CHARS:
        cut = line[: TITLE_CHARS + 1]
        line = cut[: cut.rfind(" ")] if " " in cut else line[:TITLE_CHARS]
    return _TRAILING.sub("", line) or "New conversation"
