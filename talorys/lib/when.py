"""Dates in the owner's words: "buy milk tomorrow 9am", "call Sam friday 5pm", "every monday".

One reader for every place that takes a task in words: the tasks page's quick add
(talorys/workspace/views/quick_add.py), the task form's Due in words and Repeats fields and the
hint under them (talorys/workspace/views/), ``POST /api/tasks/quick`` and the ``q`` dialog that
posts to it (talorys/workspace/api.py, static/talorys/js/keys.js), and the demo model
(talorys/providers/demo/). A repeating phrase is a repeating task everywhere (its ``schedule``
is the task's ``repeat``). It lives in lib because they all use it and lib imports no app: it
returns a task's title and due instant, or a schedule dict in the shape talorys/lib/schedules.py
validates, never a model. ``task_read`` is the one check every quick
capture makes: text that is empty, or only a date ("tomorrow 9am": what is due?), is refused.

A named weekday follows one rule, here, in the task tools' descriptions and in the user docs
(README.md, Dates in words): "friday", "on friday" and "next friday" are the first Friday
strictly after today (typed on a Thursday, that is tomorrow; typed on a Friday, a week later);
"this friday" is today when today is a Friday. To mean today, say "today" (or "this friday").
The rule is applied here (``_named_day``), not left to dateparser, so a change in its version
cannot move a due date. A weekday with a calendar date ("fri 24 dec") is that date.

One-off dates are read by ``dateparser`` (a maintained parser with its own locale data) in the
owner's zone, preferring the future. dateparser also reads lone words such as "may" (in "I may
call Sam") or "march" as dates, so a match counts only when it holds a day or time word: a
weekday, today/tomorrow/tonight, "next week", "in 3 days", a clock time, or a month WITH a day
number. Its clock time is read here too (dateparser keeps the current time for "tomorrow at 9";
"tonight" makes a bare hour the evening's), and so is an exact delay ("in 1 hour and 30 minutes",
counted in real time across a daylight-saving change). Repeating phrases ("every monday", "every
weekday 9am", "every month on the 1st") are read here, since dateparser reads no recurrences.

Wall times are made aware the way schedules make them (``fold=0``): a time in a daylight-saving
gap is shifted by the gap, a repeated time is its first occurrence. A day without a time is at
09:00 (DEFAULT_TIME), the hour a reminder of the day is useful.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Any
from zoneinfo import ZoneInfo

from talorys.lib.errors import field_refused
from talorys.lib.validation import clip, date_in_range

DEFAULT_TIME = dt.time(9, 0)
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_WEEKDAY_RE = r"(?:mon|tue|tues|wed|thu|thur|thurs|fri|sat|sun)(?:day)?s?"
_MONTHS = (
    r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
)
# A clock time: "9am", "9 pm", "17:30", "at 8", "noon", "midnight" (a bare number needs "at").
_TIME = (
    r"(?:at\s+)?(?P<hour>\d{1,2})(?::(?P<minute>\d{2}))?\s*(?P<half>[ap])\.?m\.?\b"
    r"|(?:at\s+)?(?P<hour24>\d{1,2}):(?P<minute24>\d{2})\b"
    r"|at\s+(?P<bare>\d{1,2})\b(?![:./-])"
    r"|(?:at\s+)?(?P<word>noon|midnight)\b"
)
_TIME_RE = re.compile(rf"(?<![\w:]){_TIME}", re.IGNORECASE)
# What makes a dateparser match a date rather than a word that looks like one.
_DAY_WORD = re.compile(
    rf"\b(?:today|tonight|tomorrow|{_WEEKDAY_RE}|next\s+(?:week|month|year)|"
    rf"in\s+\d+\s+(?:min(?:ute)?s?|h(?:ou)?rs?|days?|weeks?|months?))\b"
    rf"|\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTHS})\b"
    rf"|\b(?:{_MONTHS})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?\b"
    r"|\b\d{1,2}/\d{1,2}(?:/\d{2,4})?\b|\b\d{4}-\d{2}-\d{2}\b",
    re.IGNORECASE,
)
# A weekday named in the words dateparser matched, and whether they hold a calendar date.
_NAMED_DAY = re.compile(
    rf"\b(?:(?P<last>last)\s+|(?P<this>this)\s+)?(?P<day>{_WEEKDAY_RE})\b", re.I
)
_CALENDAR = re.compile(rf"\b(?:{_MONTHS})\b|\d/\d|\d-\d", re.IGNORECASE)
_EXACT = re.compile(r"\bin\s+(?P<n>\d+)\s+(?P<unit>min(?:ute)?s?|h(?:ou)?rs?)\b", re.IGNORECASE)
# Each part of an exact delay: "in 1 hour and 30 minutes" is two.
_PART = re.compile(r"\b(?P<n>\d+)\s+(?P<unit>min(?:ute)?s?|h(?:ou)?rs?)\b", re.IGNORECASE)
# "a.m." as "am": dateparser splits the dotted form ("at 9 a" read as a month).
_DOTTED = re.compile(r"\b([ap])\.m\.?(?!\w)", re.IGNORECASE)
# A bare hour tonight is in the evening: "tonight at 9" is 21:00.
_TONIGHT = re.compile(r"\btonight\b", re.IGNORECASE)
# Words left dangling at the end of a title once the date is gone ("call mom on").
_DANGLING = re.compile(r"(?:[\s,;:-]+(?:on|at|by|due|for|from|in|the))+[\s,;:-]*$", re.I)
_EVERY = re.compile(
    r"\b(?:every|each)\s+(?P<what>day|weekday|weekend|week|month"
    r"(?:\s+on\s+the\s+(?P<mday>\d{1,2})(?:st|nd|rd|th)?)?"
    rf"|(?P<days>{_WEEKDAY_RE}(?:\s*(?:,|and|&)\s*{_WEEKDAY_RE})*))\b"
    rf"|\bdaily\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Understood:
    """What the words say: the title without the date words, and when.

    ``due`` for a one-off date (aware), ``schedule`` for a repeating phrase (a dict for
    talorys/lib/schedules.py), neither when the text names no date. ``said`` is what the page
    shows the owner before adding: "Due Thu 3 Dec, 09:00", "Every Monday at 09:00". ``words``
    are the words read as the date ("friday 5pm"). ``alone``: the words are only a date
    ("tomorrow 9am" as a title): nothing is dated, the title is the words, ``said`` says the
    date they name, and a quick capture refuses them (``task_read``)."""

    title: str
    due: dt.datetime | None = None
    schedule: dict[str, Any] | None = None
    said: str = ""
    words: str = ""
    alone: bool = False

    @property
    def dated(self) -> bool:
        return self.due is not None or self.schedule is not None


def understand(
    text: str, *, zone: ZoneInfo, now: dt.datetime | None = None, titled: bool = True
) -> Understood:
    """Read ``text`` in ``zone`` at ``now`` (default: the current time). Never raises for
    words it cannot read: they stay in the title and nothing is dated.

    ``titled``: the words name a thing to do, and date words alone ("tomorrow 9am") are that
    thing's title, not a date. A due field passes False: there the words are only a date."""
    text = _DOTTED.sub(r"\1m", " ".join((text or "").split()))
    now = (now or dt.datetime.now(dt.UTC)).astimezone(zone)
    repeating = _every(text, now, titled)
    if repeating is not None:
        return repeating
    return _once(text, zone, now, titled)


def task_read(
    text: str, *, zone: ZoneInfo, now: dt.datetime | None = None, field: str = "text"
) -> Understood:
    """A task typed in words, as every quick capture reads it; ``field`` names the input in the
    error. Refused (ValidationFailed, nothing to add) when empty, or when the words are only a
    date: a task called "tomorrow 9am" with no due date is never what was meant."""
    got = understand(text, zone=zone, now=now)
    if not got.title:
        raise field_refused("Say what to do: the text is empty.", field=field)
    if got.alone:
        typed = clip(got.title, 40)
        when = got.said[:1].lower() + got.said[1:]
        raise field_refused(
            f"“{typed}” is only a date ({when}): say what to do too, e.g. “call Ana {typed}”.",
            field=field,
        )
    return got


def _clock(match: re.Match[str], evening: bool = False) -> dt.time:
    """The time of day a _TIME match names; ValueError when it is not one (25:00, 13pm).
    ``evening``: an hour before noon without am/pm is the evening's ("tonight at 9")."""
    if match["word"]:
        return dt.time(12) if match["word"].lower() == "noon" else dt.time(0)
    if match["half"]:
        hour, minute = int(match["hour"]), int(match["minute"] or 0)
        if not 1 <= hour <= 12:
            raise ValueError("not a time of day")
        return dt.time(hour % 12 + (12 if match["half"].lower() == "p" else 0), minute)
    hour, minute = int(match["hour24"] or match["bare"]), int(match["minute24"] or 0)
    return dt.time(hour + 12 if evening and 1 <= hour < 12 else hour, minute)


def _find_time(text: str, evening: bool = False) -> tuple[dt.time, tuple[int, int]] | None:
    for match in _TIME_RE.finditer(text):
        try:
            return _clock(match, evening), match.span()
        except ValueError:
            continue
    return None


def _cut(text: str, *spans: tuple[int, int]) -> str:
    """``text`` without the spans, tidied into a title."""
    for start, end in sorted(spans, reverse=True):
        text = text[:start] + " " + text[end:]
    text = " ".join(text.split())
    text = _DANGLING.sub("", text)
    text = re.sub(r"^(?:(?:on|at|by|due)\b[\s,]*)+", "", text, flags=re.I)
    return text.strip(" ,;:-")


def aware(day: dt.date, at: dt.time, zone: ZoneInfo) -> dt.datetime:
    """The wall time in ``zone`` as schedules read it: fold=0, a gap shifts by its length."""
    wall = dt.datetime.combine(day, at).replace(tzinfo=zone, fold=0)
    return wall.astimezone(dt.UTC).astimezone(zone)


def _candidate(text: str, zone: ZoneInfo, now: dt.datetime) -> tuple[str, dt.datetime] | None:
    """dateparser's first match that holds a day or time word, as (words, naive wall time)."""
    settings = {
        "PREFER_DATES_FROM": "future",
        "TIMEZONE": zone.key,
        "RETURN_AS_TIMEZONE_AWARE": True,
        "RELATIVE_BASE": now.replace(tzinfo=None),
    }
    try:
        # Imported at the first date read, not with the module: its locale data costs each web
        # process about 13 MB, and most never read a date in words.
        from dateparser.search import search_dates

        found = search_dates(text, languages=["en"], settings=settings) or []
    except (ValueError, OverflowError):  # e.g. "31/02", a year past 9999
        return None
    for words, when in found:
        # Only words found as they stand in the text: they are cut from the title.
        if words in text and (_DAY_WORD.search(words) or _TIME_RE.search(words)):
            return words, when.replace(tzinfo=None)
    return None


def _once(text: str, zone: ZoneInfo, now: dt.datetime, titled: bool) -> Understood:
    candidate = _candidate(text, zone, now)
    evening = _TONIGHT.search(text) is not None
    clock = _find_time(text, evening)
    if candidate is None and clock is None:
        return Understood(title=text)
    spans: list[tuple[int, int]] = []
    if candidate is not None:
        words, wall = candidate
        day = _named_day(words, now.date()) or wall.date()
        start = text.find(words)
        spans.append((start, start + len(words)))
        exact = _EXACT.search(words)
        said_at = _find_time(words, evening)  # its time read here: dateparser drops "at 9"
        if exact is not None:
            minutes = sum(
                int(part["n"]) * (60 if part["unit"].lower().startswith("h") else 1)
                for part in _PART.finditer(words, exact.start())
            )
            due = (now.astimezone(dt.UTC) + dt.timedelta(minutes=minutes)).astimezone(zone)
        elif said_at is not None:
            due = aware(day, said_at[0], zone)
        else:
            at = DEFAULT_TIME
            if clock is not None and not _overlaps(clock[1], spans[0]):
                at, span = clock
                spans.append(span)
            due = aware(day, at, zone)
    else:
        assert clock is not None
        at, span = clock
        spans.append(span)
        due = aware(now.date(), at, zone)
        if due <= now:
            due = aware(now.date() + dt.timedelta(days=1), at, zone)
    return _dated(text, spans, due, now, titled)


def _overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def _named_day(words: str, today: dt.date) -> dt.date | None:
    """The day a weekday in ``words`` names, by the module's rule: the first such day strictly
    after ``today``, or from today with "this". None without a weekday, with a calendar date
    ("fri 24 dec" is the 24th) or for "last friday" (left to dateparser)."""
    match = _NAMED_DAY.search(words)
    if match is None or match["last"] or _CALENDAR.search(words):
        return None
    ahead = (_KEYS.index(match["day"][:3].lower()) - today.weekday()) % 7
    if ahead == 0 and not match["this"]:
        ahead = 7
    return today + dt.timedelta(days=ahead)


def _said_words(text: str, spans: list[tuple[int, int]]) -> str:
    """The words of ``spans`` in ``text``, in their order: what was read as the date."""
    return " ".join(" ".join(text[start:end].split()) for start, end in sorted(spans))


def _dated(
    text: str, spans: list[tuple[int, int]], due: dt.datetime, now: dt.datetime, titled: bool
) -> Understood:
    title = _cut(text, *spans)
    try:
        due = date_in_range(due)
    except ValueError:
        return Understood(title=text)
    said, words = f"Due {shown(due, now)}", _said_words(text, spans)
    if titled and not title:  # "tomorrow 9am" alone: the words are the title, not a date
        return Understood(title=text, said=said, words=words, alone=True)
    return Understood(title=title, due=due, said=said, words=words)


def shown(at: dt.datetime, now: dt.datetime) -> str:
    """A date as the hint says it: "Thu 3 Dec, 09:00", with the year when it is not this one."""
    local = at.astimezone(now.tzinfo)
    year = f" {local.year}" if local.year != now.year else ""
    return f"{local:%a} {local.day} {local:%b}{year}, {local:%H:%M}"


def _every(text: str, now: dt.datetime, titled: bool) -> Understood | None:
    match = _EVERY.search(text)
    if match is None:
        return None
    spans = [match.span()]
    clock = _find_time(text)
    at = DEFAULT_TIME
    if clock is not None:
        at, span = clock
        spans.append(span)
    schedule = _schedule(match, now, f"{at:%H:%M}")
    title = _cut(text, *spans)
    title = re.sub(r"^remind me\s+(?:to\s+)?", "", title, flags=re.I).strip()
    said, words = schedule_said(schedule), _said_words(text, spans)
    if titled and not title:
        return Understood(title=text, said=said, words=words, alone=True)
    return Understood(title=title, schedule=schedule, said=said, words=words)


_KEYS = tuple(name[:3] for name in WEEKDAYS)


def _schedule(match: re.Match[str], now: dt.datetime, time: str) -> dict[str, Any]:
    what = (match["what"] or "day").lower()
    if what == "day":
        return {"type": "daily", "time": time}
    if what.startswith("month"):
        day = int(match["mday"]) if match["mday"] else now.day
        return {"type": "monthly", "day": min(max(day, 1), 31), "time": time}
    if what == "weekday":
        days = list(_KEYS[:5])
    elif what == "weekend":
        days = list(_KEYS[5:])
    elif what == "week":
        days = [_KEYS[now.weekday()]]
    else:
        days = [word.lower()[:3] for word in re.findall(_WEEKDAY_RE, what, re.I)]
    return {"type": "weekly", "days": sorted(set(days), key=_KEYS.index), "time": time}


def schedule_said(schedule: dict[str, Any]) -> str:
    """A schedule in words: "Every Monday and Thursday at 18:00" (a cron line is said as it is,
    "On cron 0 9 * * 1-5")."""
    time = schedule.get("time", "")
    if schedule.get("type") == "cron":
        return f"On cron {schedule.get('expression', '')}"
    if schedule.get("type") == "daily":
        return f"Every day at {time}"
    if schedule.get("type") == "monthly":
        return f"Every month on the {_ordinal(int(schedule['day']))} at {time}"
    days = list(schedule.get("days") or [])
    if days == list(_KEYS[:5]):
        return f"Every weekday at {time}"
    if days == list(_KEYS[5:]):
        return f"Every weekend at {time}"
    names = " and ".join(WEEKDAYS[_KEYS.index(day)].title() for day in days)
    return f"Every {names} at {time}"


def repeat_said(schedule: dict[str, Any] | None) -> str:
    """A task's repeat as its form and list say it ("Every Monday at 08:00"); "" for none."""
    return schedule_said(schedule) if schedule else ""


def _ordinal(day: int) -> str:
    suffix = "th" if 11 <= day % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{suffix}"
