"""The periods a question names: "in October 2023", "on 13 May, 2023", "in 2022", "last month".

Recall weighs items stated within them higher (priors.in_period): "what did I decide in May
2023?" asks about what was said then, and the words "May" and "2023" are rarely in the item
itself. Read here, not by dateparser (talorys/lib/when.py's reader, for due dates): a question is
not a date, and what is wanted is every period it names, each as a span of time.

Named dates are absolute (a day, a month of a year, a year); relative ones ("yesterday", "last
week", "this month", "last year", "in May" without a year: the latest May that has begun) are
counted from ``now``. Days are UTC days: the window after a period (priors.PERIOD_GRACE) is far
wider than a time zone's offset.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re

Period = tuple[float, float]  # POSIX seconds: [start, end)

_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
_MONTH = r"(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_YEAR = r"((?:19|20)\d\d)"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
# Most specific first: a span one pattern took is not read again by a later one.
_PATTERNS = [
    ("day", re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b", re.I), (1, 2, 3)),
    ("day", re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b", re.I), (2, 1, 3)),
    ("month", re.compile(rf"\b{_MONTH},?\s+(?:of\s+)?{_YEAR}\b", re.I), (0, 1, 2)),
    ("year", re.compile(rf"\b(?:in|during|of|since|year)\s+{_YEAR}\b", re.I), (0, 0, 1)),
    ("bare_month", re.compile(rf"\b(?:in|during|since)\s+{_MONTH}\b(?!\s+\d)", re.I), (0, 1, 0)),
    (
        "relative",
        re.compile(r"\b(yesterday|today|(?:last|this)\s+(?:week|month|year))\b", re.I),
        (),
    ),
]


def periods(question: str, *, now: dt.datetime) -> list[Period]:
    """Every period ``question`` names, in the order found; [] when it names none."""
    found: list[Period] = []
    taken: list[tuple[int, int]] = []
    for kind, pattern, order in _PATTERNS:
        for match in pattern.finditer(question):
            if any(start <= match.start() < end for start, end in taken):
                continue
            span = _span(kind, match.groups(), order, now.astimezone(dt.UTC))
            if span is not None:
                found.append((span[0].timestamp(), span[1].timestamp()))
                taken.append(match.span())
    return found


def _span(
    kind: str, groups: tuple[str, ...], order: tuple[int, ...], now: dt.datetime
) -> tuple[dt.datetime, dt.datetime] | None:
    if kind == "relative":
        return _relative(groups[0].lower().split()[-1], groups[0].lower(), now)
    year = int(groups[order[2] - 1]) if kind != "bare_month" else now.year
    month = _MONTHS[groups[order[1] - 1].lower()] if kind != "year" else 1
    if kind == "year":
        return _utc(year, 1, 1), _utc(year + 1, 1, 1)
    if kind == "bare_month" and month > now.month:
        year -= 1  # "in May" in March: last year's
    if kind in ("month", "bare_month"):
        return _utc(year, month, 1), _next_month(year, month)
    day = int(groups[order[0] - 1])
    if not 1 <= day <= calendar.monthrange(year, month)[1]:
        return None
    start = _utc(year, month, day)
    return start, start + dt.timedelta(days=1)


def _relative(unit: str, words: str, now: dt.datetime) -> tuple[dt.datetime, dt.datetime]:
    today = _utc(now.year, now.month, now.day)
    back = words.startswith(("last", "yesterday"))
    if unit in ("yesterday", "today"):
        start = today - dt.timedelta(days=1 if back else 0)
        return start, start + dt.timedelta(days=1)
    if unit == "week":
        start = today - dt.timedelta(days=today.weekday() + (7 if back else 0))
        return start, start + dt.timedelta(days=7)
    if unit == "month":
        year, month = (now.year, now.month - 1) if back else (now.year, now.month)
        if month == 0:
            year, month = year - 1, 12
        return _utc(year, month, 1), _next_month(year, month)
    year = now.year - 1 if back else now.year
    return _utc(year, 1, 1), _utc(year + 1, 1, 1)


def _utc(year: int, month: int, day: int) -> dt.datetime:
    return dt.datetime(year, month, day, tzinfo=dt.UTC)


def _next_month(year: int, month: int) -> dt.datetime:
    return _utc(year + month // 12, month % 12 + 1, 1)
