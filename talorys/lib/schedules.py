"""Schedules: an explicit, validated schema, and the next occurrence in the owner's time zone.

A schedule is one of (JSON, ``type`` picks the kind)::

    {"type": "once", "at": "2026-03-14T09:00:00+01:00"}     an instant; the offset is required
    {"type": "daily", "time": "07:30"}
    {"type": "weekly", "days": ["mon", "thu"], "time": "18:00"}
    {"type": "monthly", "day": 31, "time": "09:00"}
    {"type": "cron", "expression": "0 9 * * 1-5"}            five fields, read by croniter

Recurring schedules are wall-clock times in the owner's time zone, so "daily at 07:30" stays at
07:30 across daylight-saving changes. Where the wall clock and the calendar disagree:

- A local time that does not exist that day (spring forward: 02:30 in Europe/Paris on the last
  Sunday of March) runs at that time shifted by the gap (03:30). It is not skipped, and runs once.
- A local time that happens twice (fall back: 02:30 on the last Sunday of October in Paris) runs
  once, at its first occurrence (still summer time). Cron follows the same rule, so an every-15-
  minutes expression is quiet during the repeated hour rather than firing each minute twice.
- ``monthly`` on day 29, 30 or 31 runs on the last day of shorter months (clamped, not skipped):
  "on the 31st" is how people say "at the end of the month".

Both rules are what Python's ``zoneinfo`` does with ``fold=0``; ``next_after`` relies on it.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator
from typing import Annotated, Literal
from zoneinfo import ZoneInfo

from croniter import CroniterError, croniter
from dateutil import rrule
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    field_validator,
)

from talorys.lib.bounded import BoundedDatetime
from talorys.lib.errors import ValidationFailed

UTC = dt.UTC
WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
Weekday = Literal["mon", "tue", "wed", "thu", "fri", "sat", "sun"]


_HHMM = "^([01][0-9]|2[0-3]):[0-5][0-9]$"


def _parse_hhmm(value: str) -> str:
    if not re.fullmatch(_HHMM, value):
        raise ValueError("use 24-hour HH:MM, e.g. 07:30 or 18:00")
    return value


HHMM = Annotated[
    str,
    AfterValidator(_parse_hhmm),
    Field(
        description="Local time of day, 24-hour HH:MM, e.g. 07:30.",
        json_schema_extra={"pattern": _HHMM},
    ),
]


class _Schedule(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)


class Once(_Schedule):
    type: Literal["once"]
    # Bounded (1900..2200) like every date given: 9999-12-31 overflowed when shown in a zone
    # ahead of UTC.
    at: BoundedDatetime = Field(
        description="The instant, ISO 8601 WITH a UTC offset, e.g. 2026-03-14T09:00:00+01:00."
    )


class Daily(_Schedule):
    type: Literal["daily"]
    time: HHMM


class Weekly(_Schedule):
    type: Literal["weekly"]
    days: list[Weekday] = Field(
        min_length=1, max_length=7, description='Days of the week, e.g. ["mon", "wed", "fri"].'
    )
    time: HHMM

    @field_validator("days")
    @classmethod
    def _ordered(cls, days: list[str]) -> list[str]:
        return sorted(set(days), key=WEEKDAYS.index)


class Monthly(_Schedule):
    type: Literal["monthly"]
    day: int = Field(
        ge=1,
        le=31,
        description="Day of the month, 1-31; 29-31 mean the last day in shorter months.",
    )
    time: HHMM


_EQUAL_RANGE = re.compile(r"\b(\w+)-(\w+)(/\d+)?\b")


def _one_value(match: re.Match[str]) -> str:
    # croniter reads a range whose ends are equal ("3-3", "mon-mon") as the whole field, so
    # "0 3-3 * * *" would run every hour; cron reads it as that one value, and so do we.
    low, high = match.group(1).lower(), match.group(2).lower()
    if low == high or (low.isdigit() and high.isdigit() and int(low) == int(high)):
        return match.group(1)
    return match.group(0)


class Cron(_Schedule):
    type: Literal["cron"]
    expression: str = Field(
        max_length=200,
        description="Five-field cron (minute hour day-of-month month day-of-week) in local time, "
        "e.g. '0 9 * * 1-5' for 09:00 on weekdays.",
    )

    @field_validator("expression")
    @classmethod
    def _valid(cls, expression: str) -> str:
        expression = _EQUAL_RANGE.sub(_one_value, " ".join(expression.split()))
        if len(expression.split(" ")) != 5 or not croniter.is_valid(expression):
            raise ValueError(
                "use five cron fields: minute hour day-of-month month day-of-week, e.g. '0 9 * * 1-5'"
            )
        try:  # e.g. "0 0 30 2 *" is well-formed but never happens
            croniter(expression, dt.datetime(2000, 1, 1)).get_next(dt.datetime)
        except CroniterError as exc:
            raise ValueError("this expression never matches a real date") from exc
        return expression


Schedule = Annotated[Once | Daily | Weekly | Monthly | Cron, Field(discriminator="type")]
_adapter: TypeAdapter[Schedule] = TypeAdapter(Schedule)


def _readable(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors():
        # The discriminator adds the kind to the path ("daily.time"); the owner wrote "time".
        loc = [
            str(p) for p in error["loc"] if p not in ("once", "daily", "weekly", "monthly", "cron")
        ]
        message = error["msg"].removeprefix("Value error, ")
        if error["type"] == "union_tag_invalid" or error["type"] == "union_tag_not_found":
            message = "type must be one of once, daily, weekly, monthly, cron"
        parts.append(f"schedule{'.' if loc else ''}{'.'.join(loc)}: {message}")
    return "; ".join(parts)


def schedule_parse(data: object) -> Schedule:
    """The validated schedule, or ValidationFailed naming each wrong field."""
    if isinstance(data, Once | Daily | Weekly | Monthly | Cron):
        return data
    try:
        return _adapter.validate_python(data)
    except ValidationError as exc:
        raise ValidationFailed(_readable(exc)) from exc


# A task's repeat (talorys/workspace/services/tasks.py): a recurring schedule, never ``once``,
# since a task due once is a task with a due date.
Repeat = Annotated[Daily | Weekly | Monthly | Cron, Field(discriminator="type")]
_repeat_adapter: TypeAdapter[Repeat] = TypeAdapter(Repeat)


def repeat_parse(data: object, *, field: str = "repeat") -> Repeat:
    """The validated repeat rule, or ValidationFailed naming ``field`` and each wrong part."""
    if isinstance(data, Daily | Weekly | Monthly | Cron):
        return data
    try:
        return _repeat_adapter.validate_python(data)
    except ValidationError as exc:
        message = re.sub(r"(^|; )schedule(?=[.:])", rf"\g<1>{field}", _readable(exc))
        message = message.replace("once, daily", "daily")  # once is no repeat
        raise ValidationFailed(message, details={"field": field}) from exc


def schedule_dump(schedule: Schedule) -> dict:
    return _adapter.dump_python(schedule, mode="json")


def _zone(tz: ZoneInfo | str) -> ZoneInfo:
    return tz if isinstance(tz, ZoneInfo) else ZoneInfo(tz)


def _hm(value: str) -> tuple[int, int]:
    hour, minute = value.split(":")
    return int(hour), int(minute)


def _offset(value: dt.datetime) -> dt.timedelta:
    offset = value.utcoffset()
    assert offset is not None  # callers pass aware datetimes
    return offset


def _wall_times(
    schedule: Daily | Weekly | Monthly | Cron, start: dt.datetime
) -> Iterator[dt.datetime]:
    """Naive local wall-clock times of the schedule strictly after naive ``start``, ascending."""
    if isinstance(schedule, Cron):
        cron = croniter(schedule.expression, start)
        while True:
            yield cron.get_next(dt.datetime)
    hour, minute = _hm(schedule.time)
    first = start.replace(hour=0, minute=0, second=0, microsecond=0)
    if isinstance(schedule, Daily):
        rule = rrule.rrule(rrule.DAILY, dtstart=first, byhour=hour, byminute=minute, bysecond=0)
    elif isinstance(schedule, Weekly):
        days = [WEEKDAYS.index(d) for d in schedule.days]
        rule = rrule.rrule(
            rrule.WEEKLY, dtstart=first, byweekday=days, byhour=hour, byminute=minute, bysecond=0
        )
    else:
        # (day, -1) with bysetpos=1: the earlier of "that day" and "the last day" of each month.
        rule = rrule.rrule(
            rrule.MONTHLY,
            dtstart=first.replace(day=1),
            bymonthday=(schedule.day, -1),
            bysetpos=1,
            byhour=hour,
            byminute=minute,
            bysecond=0,
        )
    yield from rule.xafter(start, inc=False)


def wall_to_instant(wall: dt.datetime, zone: ZoneInfo) -> dt.datetime:
    """The UTC instant of a local wall-clock time: first occurrence when repeated, shifted by the
    gap when skipped (``fold=0``; see the module docstring)."""
    return wall.replace(tzinfo=zone, fold=0).astimezone(UTC)


def next_after(schedule: Schedule, after: dt.datetime, tz: ZoneInfo | str) -> dt.datetime | None:
    """The first occurrence strictly after ``after``, as an aware UTC datetime; None when the
    schedule has no more occurrences (a past ``once``)."""
    if after.tzinfo is None:
        raise ValueError("after must be timezone-aware")
    if isinstance(schedule, Once):
        at = schedule.at.astimezone(UTC)
        return at if at > after else None
    zone = _zone(tz)
    local_after = after.astimezone(zone)
    # A wall time in a gap runs late by the gap's length, so one up to that long before the wall
    # clock now can still be ahead (02:30 runs at 03:30; asked at 03:10, it is still to come).
    # Gaps in tzdata last at most a day (Samoa skipped 2011-12-30).
    day_before = (after.astimezone(UTC) - dt.timedelta(days=1)).astimezone(zone)
    gap = max(_offset(local_after) - _offset(day_before), dt.timedelta(0))
    best: dt.datetime | None = None
    horizon: dt.datetime | None = None
    for wall in _wall_times(schedule, local_after.replace(tzinfo=None) - gap):
        if horizon is not None and wall >= horizon:
            break
        instant = wall_to_instant(wall, zone)
        # A wall time in the repeated hour (its first occurrence) or one looked back at for the
        # gap can be an instant already past: skip it.
        if instant <= after:
            continue
        if best is None:
            best = instant
            shifted = instant.astimezone(zone).replace(tzinfo=None)
            if shifted == wall:
                return best
            # ``wall`` lies in a gap and runs shifted; a real wall time less than the gap
            # after it (03:00 after a shifted 02:30) is an earlier instant, so look that far.
            horizon = shifted
        elif instant < best:
            best = instant
    return best


def upcoming(
    schedule: Schedule, after: dt.datetime, tz: ZoneInfo | str, count: int
) -> list[dt.datetime]:
    """The next ``count`` occurrences strictly after ``after`` (fewer for a ``once``), in UTC:
    what the owner is shown before saving a schedule."""
    runs: list[dt.datetime] = []
    slot = next_after(schedule, after, tz)
    while slot is not None and len(runs) < count:
        runs.append(slot)
        slot = next_after(schedule, slot, tz)
    return runs


def describe(schedule: Schedule, tz: ZoneInfo | str) -> str:
    """A short owner-readable description, e.g. "every Mon, Thu at 18:00 (Europe/Paris)"."""
    zone = _zone(tz)
    if isinstance(schedule, Once):
        try:
            local = schedule.at.astimezone(zone)
        except OverflowError:  # only a row written before dates were bounded
            return f"once at {schedule.at:%Y-%m-%d %H:%M%z}"
        return f"once at {local:%Y-%m-%d %H:%M} ({zone.key})"
    if isinstance(schedule, Daily):
        what = "every day"
    elif isinstance(schedule, Weekly):
        what = "every " + ", ".join(d.capitalize() for d in schedule.days)
    elif isinstance(schedule, Monthly):
        last = " (or the month's last day)" if schedule.day > 28 else ""
        what = f"monthly on day {schedule.day}{last}"
    else:
        return f"cron '{schedule.expression}' ({zone.key})"
    return f"{what} at {schedule.time} ({zone.key})"
