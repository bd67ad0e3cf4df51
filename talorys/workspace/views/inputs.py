"""What the workspace pages read from a form in the owner's zone (ids and page numbers:
``talorys.web.pages``)."""

from __future__ import annotations

import datetime as dt
from typing import Any
from zoneinfo import ZoneInfo

from talorys.lib.errors import ValidationFailed
from talorys.lib.validation import clip, local_datetime
from talorys.lib.when import understand
from talorys.owner.middleware import OwnerRequest
from talorys.web.pages import form_text


def owner_zone_of(request: OwnerRequest) -> ZoneInfo:
    """The owner's zone, kept on the request for every signed-in page (workspace middleware)."""
    return ZoneInfo(request.owner_settings.time_zone)


def form_when(request: OwnerRequest, name: str, *, label: str) -> dt.datetime | None:
    """A ``datetime-local`` field, a wall-clock time in the owner's zone."""
    return local_datetime(form_text(request, name), owner_zone_of(request), field=label)


def form_due_words(request: OwnerRequest, name: str, *, label: str) -> dt.datetime | None:
    """A due date in words ("tomorrow 9am", "fri 17:30") read in the owner's zone
    (talorys/lib/when.py); None when empty. A repeating phrase, or words that are not all a
    date, are refused: a task is due once, and a half-read date would be a wrong one."""
    words = form_text(request, name)
    if not words:
        return None
    got = understand(words, zone=owner_zone_of(request), titled=False)
    shown = clip(words, 40)
    if got.schedule is not None:
        raise ValidationFailed(
            f"{label}: “{shown}” repeats. Type it in the Repeats field instead, and the task "
            "moves to its next date each time it is completed."
        )
    if got.due is None or got.title:
        raise ValidationFailed(
            f"{label}: “{shown}” is not a date we can read; write it like “tomorrow 9am” "
            "or “fri 17:30”, or pick it in the Due field."
        )
    return got.due


def form_repeat(request: OwnerRequest, name: str, *, label: str) -> dict[str, Any] | None:
    """A repeat in words ("every monday 8am", "every month on the 1st"), read by
    talorys/lib/when.py into a schedule; None when empty (the task stops repeating). Words that
    are not all a repeat are refused, as in Due in words."""
    words = form_text(request, name)
    if not words:
        return None
    got = understand(words, zone=owner_zone_of(request), titled=False)
    if got.schedule is None or got.title:
        raise ValidationFailed(
            f"{label}: “{clip(words, 40)}” is not a repeat we can read; write it like “every monday 8am”, "
            "“every day at 7:30” or “every month on the 1st”, or leave it empty."
        )
    return got.schedule


def understood(words: str, zone: ZoneInfo, *, due: bool = False) -> dict[str, object]:
    """What quick add (or, ``due``, the Due in words field) reads in ``words``, as the hint
    under the field says it: the title left, the date in words, and whether it repeats."""
    got = understand(words, zone=zone, titled=not due)
    said = got.said
    if due and (got.title or not got.dated):  # words that are not all a date: not read
        said = ""
    elif got.alone:  # only a date: quick add refuses it (talorys/lib/when.py, task_read)
        said = f"Only a date ({said}): say what to do too, e.g. “call Ana {got.title}”"
    elif due and got.schedule is not None:
        said = f"{said}: that repeats, say it in the Repeats field"
    elif got.schedule is not None:
        said = f"{said} · adds “{got.title}”, repeating"
    elif got.due is not None:
        said = f"{said} · adds “{got.title}”"
    return {
        "title": got.title,
        "said": said,
        "repeats": got.schedule is not None,
        "alone": got.alone,
        "due": got.due.isoformat() if got.due else None,
        "words": got.words,
    }


def understood_hint(words: str, zone: ZoneInfo, *, due: bool = False) -> str:
    return str(understood(words, zone, due=due)["said"]) if words else ""
