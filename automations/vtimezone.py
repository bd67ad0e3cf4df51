"""A VTIMEZONE with yearly RRULEs, as Google Calendar and Outlook write them.

icalendar's own (``add_missing_timezones``) lists every past change as RDATEs up to 2038; some
readers (ical.js, so Thunderbird) then place a summer event at the winter offset. This one is
made from the zone's current rule, the POSIX TZ string at the end of its TZif file
("CET-1CEST,M3.5.0,M10.5.0/3"): a STANDARD and a DAYLIGHT part, each a yearly rule from 1970.
A zone the string cannot say that way (a rule on a day of the year, a change at 24:00 or later)
gets ``None`` and the caller keeps icalendar's.
"""

from __future__ import annotations

import datetime as dt
import re
import zoneinfo
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from icalendar import Timezone, TimezoneDaylight, TimezoneStandard

_NAME = r"(?:<[^>]+>|[A-Za-z]{3,})"
_OFFSET = r"[+-]?\d{1,2}(?::\d{2}){0,2}"
_RULE = r"M(\d{1,2})\.(\d)\.(\d)(?:/(-?\d{1,3}(?::\d{2}){0,2}))?"
_POSIX = re.compile(
    rf"^({_NAME})({_OFFSET})(?:({_NAME})({_OFFSET})?,{_RULE},{_RULE})?$",
)
_DAYS = ["SU", "MO", "TU", "WE", "TH", "FR", "SA"]
EPOCH_YEAR = 1970


def _footer(key: str) -> str | None:
    """The POSIX TZ string of a zone's TZif file (its last line), from the system's zone files
    or the tzdata package."""
    for base in zoneinfo.TZPATH:
        path = Path(base) / key
        if path.is_file():
            data = path.read_bytes()
            break
    else:
        try:
            package, _, name = f"tzdata.zoneinfo.{key}".replace("/", ".").rpartition(".")
            data = resources.files(package).joinpath(name).read_bytes()
        except (ModuleNotFoundError, FileNotFoundError, ValueError):
            return None
    if not data.startswith(b"TZif") or not data.endswith(b"\n"):
        return None
    return data.rsplit(b"\n", 2)[-2].decode("ascii", "replace")


def _seconds(text: str) -> int:
    sign = -1 if text.startswith("-") else 1
    parts = [int(part) for part in text.lstrip("+-").split(":")]
    parts += [0] * (3 - len(parts))
    return sign * (parts[0] * 3600 + parts[1] * 60 + parts[2])


def _transition(
    month: str, week: str, day: str, at: str | None
) -> tuple[dt.datetime, dict[str, object]] | None:
    """The rule's first day in 1970 at its wall time, and its RRULE; None for a time RRULE's
    day cannot hold."""
    seconds = _seconds(at) if at else 7200
    if not 0 <= seconds < 86400:
        return None
    nth = -1 if week == "5" else int(week)
    byday = f"{nth}{_DAYS[int(day)]}"
    rule: dict[str, object] = {"freq": "yearly", "bymonth": int(month), "byday": byday}
    first = dt.date(EPOCH_YEAR, int(month), 1)
    days = (first + dt.timedelta(n) for n in range(31))
    matching = [d for d in days if d.month == first.month and (d.weekday() + 1) % 7 == int(day)]
    date = matching[nth - 1] if nth > 0 else matching[-1]
    start = dt.datetime.combine(date, dt.time()) + dt.timedelta(seconds=seconds)
    return start, rule


def _name(text: str) -> str:
    return text.strip("<>")


def _part(
    kind: str,
    name: str,
    start: dt.datetime,
    before: int,
    after: int,
    rule: dict[str, object] | None = None,
) -> TimezoneStandard | TimezoneDaylight:
    from icalendar import TimezoneDaylight, TimezoneStandard

    part = TimezoneDaylight() if kind == "daylight" else TimezoneStandard()
    part.add("tzname", _name(name))
    part.add("dtstart", start)
    part.add("tzoffsetfrom", dt.timedelta(seconds=before))
    part.add("tzoffsetto", dt.timedelta(seconds=after))
    if rule:
        part.add("rrule", rule)
    return part


def vtimezone(key: str) -> Timezone | None:
    """The zone ``key`` as a VTIMEZONE with yearly rules, or None (see the module's note)."""
    from icalendar import Timezone

    footer = _footer(key)
    match = _POSIX.match(footer or "")
    if match is None:
        return None
    std_name, std_off, dst_name, dst_off, *rules = match.groups()
    # POSIX offsets are west of Greenwich; iCalendar's east.
    standard = -_seconds(std_off)
    timezone = Timezone()
    timezone.add("tzid", key)
    if dst_name is None:
        start = dt.datetime(EPOCH_YEAR, 1, 1)
        timezone.add_component(_part("standard", std_name, start, standard, standard))
        return timezone
    daylight = -_seconds(dst_off) if dst_off else standard + 3600
    onset, end = _transition(*rules[:4]), _transition(*rules[4:])
    if onset is None or end is None:
        return None
    timezone.add_component(_part("daylight", dst_name, onset[0], standard, daylight, onset[1]))
    timezone.add_component(_part("standard", std_name, end[0], daylight, standard, end[1]))
    return timezone
