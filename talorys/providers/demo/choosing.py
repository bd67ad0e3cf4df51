"""Which task the owner named, among those search_tasks found.

Search ranks by words in any form and, with an embedder on, by meaning too, so it also returns
weak neighbours ("Call the dentist" for "book the dentist"). The demo counts only real
candidates: a task whose title has every word the owner used ("I bought the milk": "milk", and
any form of the verb, as "Buy milk" has). Among them an exact title wins (up to case, quotes and
a trailing full stop), then a title of the very same words; one is the task, several are asked
about, and none is "not found".
"""

from __future__ import annotations

import re
from typing import Any

from talorys.lib.subjects import words
from talorys.providers.demo.parse import DemoRequest

_IRREGULAR_PAST = {
    "buy": "bought",
    "pay": "paid",
    "send": "sent",
    "write": "wrote",
    "make": "made",
    "take": "took",
    "get": "got",
    "bring": "brought",
    "sell": "sold",
    "give": "gave",
    "meet": "met",
    "ring": "rang",
    "feed": "fed",
}


def candidates(request: DemoRequest, tasks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The real candidates in ``tasks`` for what the owner named, the best tier only: one is
    the task; none, or several to ask about."""
    wanted = words(request.what)
    if not wanted:
        return []
    real = [task for task in tasks if _names(request, wanted, _title(task))]
    exact = [
        task for task in real if not request.verb and plain(_title(task)) == plain(request.what)
    ]
    same = [task for task in real if _content(request, _title(task)) == wanted]
    return exact or same or real


def named(request: DemoRequest) -> str:
    """What the owner named, in their words: "buy milk", "bought milk"."""
    return f"{request.verb} {request.what}" if request.verb else request.what


def _names(request: DemoRequest, wanted: frozenset[str], title: str) -> bool:
    if not wanted <= words(title):
        return False
    return not request.verb or any(request.verb in _past(word) for word in _raw(title))


def _content(request: DemoRequest, title: str) -> frozenset[str]:
    """The title's words, without the verb the owner said in the past ("Buy milk": "milk")."""
    verbs = {word for word in _raw(title) if request.verb and request.verb in _past(word)}
    return words(title) - words(" ".join(verbs))


def _past(word: str) -> set[str]:
    forms = {word + "ed", word + "d", word + word[-1:] + "ed", _IRREGULAR_PAST.get(word, "")}
    if word.endswith("y"):
        forms.add(word[:-1] + "ied")
    return forms


def _raw(title: str) -> list[str]:
    return re.findall(r"[^\W_]+", title.casefold())


def _title(task: dict[str, Any]) -> str:
    return str(task.get("title") or "")


def plain(title: str) -> str:
    return " ".join(title.split()).strip("\"'“”‘’").rstrip(".").strip().casefold()
