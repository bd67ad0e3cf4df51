"""Schedules in the owner's time zone: validation, DST days, and property tests against an
independent oracle (dateutil's own tz database reader and ``resolve_imaginary``, and brute-force
expansion of the schedule's dates)."""

from __future__ import annotations

import calendar
import datetime as dt
import functools
from typing import NamedTuple
from zoneinfo import ZoneInfo

import pytest
from dateutil import tz as dateutil_tz
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from talorys.lib.errors import ValidationFailed
from talorys.lib.schedules import (
    WEEKDAYS,
    Cron,
    Daily,
    Monthly,
    Weekly,
    describe,
    next_after,
    schedule_parse,
)

UTC = dt.UTC
PARIS = ZoneInfo("Europe/Paris")
NEW_YORK = ZoneInfo("America/New_York")
HOUR = dt.timedelta(hours=1)


def utc(*args: int) -> dt.datetime:
    return dt.datetime(*args, tzinfo=UTC)


def local(value: dt.datetime | None, zone: ZoneInfo) -> str:
    assert value is not None
    return value.astimezone(zone).strftime("%Y-%m-%d %H:%M %z")


def series(schedule: dict, after: dt.datetime, zone: ZoneInfo, n: int) -> list[str]:
    parsed = schedule_parse(schedule)
    out = []
    for _ in range(n):
        after = next_after(parsed, after, zone)
        out.append(local(after, zone))
    return out


# --- DST days, by example ----------------------------------------------------------------------


def test_daily_keeps_its_wall_clock_time_across_both_dst_changes():
    daily = {"type": "daily", "time": "09:00"}
    assert series(daily, utc(2026, 3, 28, 12), PARIS, 2) == [
        "2026-03-29 09:00 +0200",  # spring forward that night
        "2026-03-30 09:00 +0200",
    ]
    assert series(daily, utc(2026, 10, 24, 12), PARIS, 2) == [
        "2026-10-25 09:00 +0100",  # fall back that night
        "2026-10-26 09:00 +0100",
    ]


def test_a_time_that_does_not_exist_runs_shifted_by_the_gap_once():
    # 02:30 does not exist in Paris on 2026-03-29 (02:00 -> 03:00): it runs at 03:30 that day.
    assert series({"type": "daily", "time": "02:30"}, utc(2026, 3, 28, 12), PARIS, 3) == [
        "2026-03-29 03:30 +0200",
        "2026-03-30 02:30 +0200",
        "2026-03-31 02:30 +0200",
    ]
    # New York, 2026-03-08 02:00 -> 03:00.
    assert series({"type": "daily", "time": "02:15"}, utc(2026, 3, 7, 12), NEW_YORK, 2) == [
        "2026-03-08 03:15 -0400",
        "2026-03-09 02:15 -0400",
    ]
    # Both skipped times of a cron run, each shifted; the second is still to come once the
    # first has run (at 03:00, after the gap).
    assert series(
        {"type": "cron", "expression": "0,30 2 * * *"}, utc(2026, 3, 28, 12), PARIS, 3
    ) == [
        "2026-03-29 03:00 +0200",
        "2026-03-29 03:30 +0200",
        "2026-03-30 02:00 +0200",
    ]


def test_a_time_that_happens_twice_runs_once_at_its_first_occurrence():
    # 02:30 happens twice in Paris on 2026-10-25 (03:00 CEST -> 02:00 CET): once, in summer time.
    assert series({"type": "daily", "time": "02:30"}, utc(2026, 10, 24, 12), PARIS, 2) == [
        "2026-10-25 02:30 +0200",
        "2026-10-26 02:30 +0100",
    ]
    # Asked during the second 02:xx, the day's slot has passed: the next is tomorrow.
    second_pass = dt.datetime(2026, 10, 25, 2, 10, tzinfo=PARIS, fold=1)
    assert series({"type": "daily", "time": "02:30"}, second_pass, PARIS, 1) == [
        "2026-10-26 02:30 +0100"
    ]


def test_cron_in_the_gap_and_the_repeated_hour():
    every_half_hour = {"type": "cron", "expression": "*/30 * * * *"}
    # Spring forward: 02:00 and 02:30 run shifted, as 03:00 and 03:30; nothing runs twice.
    assert series(every_half_hour, utc(2026, 3, 29, 0, 10), PARIS, 4) == [
        "2026-03-29 01:30 +0100",
        "2026-03-29 03:00 +0200",
        "2026-03-29 03:30 +0200",
        "2026-03-29 04:00 +0200",
    ]
    # Fall back: each wall-clock time once, so the repeated hour is quiet the second time.
    assert series(every_half_hour, utc(2026, 10, 25, 0, 10), PARIS, 4) == [
        "2026-10-25 02:30 +0200",
        "2026-10-25 03:00 +0100",
        "2026-10-25 03:30 +0100",
        "2026-10-25 04:00 +0100",
    ]


def test_cron_day_of_month_and_day_of_week_both_given_means_either():
    # Friday 2026-02-13: the 13th and Fridays, each day once.
    assert series({"type": "cron", "expression": "0 9 13 * 5"}, utc(2026, 2, 1), PARIS, 4) == [
        "2026-02-06 09:00 +0100",
        "2026-02-13 09:00 +0100",
        "2026-02-20 09:00 +0100",
        "2026-02-27 09:00 +0100",
    ]


def test_a_cron_range_whose_ends_are_equal_is_that_one_value():
    # croniter alone would read "3-3" as every hour and "mon-mon" as every day.
    schedule = schedule_parse({"type": "cron", "expression": "0 3-3 * * mon-mon"})
    assert schedule.expression == "0 3 * * mon"
    assert series(
        {"type": "cron", "expression": "0 3-3 * * mon-mon"}, utc(2026, 2, 1), PARIS, 2
    ) == [
        "2026-02-02 03:00 +0100",
        "2026-02-09 03:00 +0100",
    ]


def test_weekly_and_monthly_in_another_hemisphere_and_half_hour_zones():
    sydney = ZoneInfo("Australia/Sydney")  # DST ends 2026-04-05, starts 2026-10-04
    weekly = {"type": "weekly", "days": ["sun", "mon"], "time": "02:30"}
    assert series(weekly, utc(2026, 10, 1), sydney, 3) == [
        "2026-10-04 03:30 +1100",  # 02:30 does not exist that Sunday
        "2026-10-05 02:30 +1100",
        "2026-10-11 02:30 +1100",
    ]
    lord_howe = ZoneInfo("Australia/Lord_Howe")  # a 30-minute DST shift
    assert series({"type": "daily", "time": "02:15"}, utc(2026, 10, 3), lord_howe, 2) == [
        "2026-10-04 02:45 +1100",
        "2026-10-05 02:15 +1100",
    ]
    kolkata = ZoneInfo("Asia/Kolkata")
    assert series(
        {"type": "monthly", "day": 15, "time": "09:00"}, utc(2026, 1, 20), kolkata, 2
    ) == [
        "2026-02-15 09:00 +0530",
        "2026-03-15 09:00 +0530",
    ]


def test_monthly_on_day_31_runs_on_the_last_day_of_shorter_months():
    monthly = {"type": "monthly", "day": 31, "time": "18:00"}
    assert series(monthly, utc(2028, 1, 1), PARIS, 5) == [
        "2028-01-31 18:00 +0100",
        "2028-02-29 18:00 +0100",  # leap year
        "2028-03-31 18:00 +0200",
        "2028-04-30 18:00 +0200",
        "2028-05-31 18:00 +0200",
    ]


def test_once_is_an_instant_and_has_no_second_occurrence():
    once = schedule_parse({"type": "once", "at": "2026-05-01T09:00:00+02:00"})
    first = next_after(once, utc(2026, 4, 1), "Asia/Tokyo")
    assert first == utc(2026, 5, 1, 7)
    assert next_after(once, first, "Asia/Tokyo") is None


def test_descriptions():
    assert describe(
        schedule_parse({"type": "weekly", "days": ["thu", "mon", "mon"], "time": "18:00"}), PARIS
    ) == ("every Mon, Thu at 18:00 (Europe/Paris)")
    assert "last day" in describe(
        schedule_parse({"type": "monthly", "day": 30, "time": "09:00"}), PARIS
    )


# --- validation --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"type": "daily", "time": "7:30"}, "schedule.time: use 24-hour HH:MM"),
        ({"type": "daily", "time": "24:00"}, "schedule.time: use 24-hour HH:MM"),
        ({"type": "daily"}, "schedule.time: Field required"),
        ({"type": "weekly", "days": [], "time": "07:30"}, "schedule.days"),
        ({"type": "weekly", "days": ["monday"], "time": "07:30"}, "schedule.days.0"),
        ({"type": "monthly", "day": 0, "time": "07:30"}, "schedule.day"),
        (
            {"type": "once", "at": "2026-01-01T09:00:00"},
            "schedule.at: Input should have timezone info",
        ),
        ({"type": "cron", "expression": "0 9 * *"}, "schedule.expression: use five cron fields"),
        ({"type": "cron", "expression": "0 0 30 2 *"}, "never matches a real date"),
        ({"type": "cron", "expression": "0 0 9 * * * 2026"}, "use five cron fields"),
        ({"type": "hourly"}, "schedule: type must be one of once, daily, weekly, monthly, cron"),
        (
            {"type": "daily", "time": "07:30", "tz": "UTC"},
            "schedule.tz: Extra inputs are not permitted",
        ),
        ("every day", "schedule: Input should be a valid dictionary"),
    ],
)
def test_invalid_schedules_are_refused_with_a_message_naming_the_field(data, message):
    with pytest.raises(ValidationFailed) as exc:
        schedule_parse(data)
    assert message in exc.value.message


def test_weekly_days_are_deduplicated_and_ordered():
    assert schedule_parse(
        {"type": "weekly", "days": ["fri", "mon", "fri"], "time": "08:00"}
    ).days == [
        "mon",
        "fri",
    ]


# --- properties against an independent oracle --------------------------------------------------

ZONES = [
    "UTC",
    "Europe/Paris",
    "Europe/London",
    "America/New_York",
    "America/Santiago",
    "Australia/Sydney",
    "Australia/Lord_Howe",
    "Asia/Kolkata",
    "Pacific/Chatham",
    "Antarctica/Troll",
    "Pacific/Apia",  # skipped 2011-12-30 entirely
]

hhmm = st.builds(lambda h, m: f"{h:02d}:{m:02d}", st.integers(0, 23), st.integers(0, 59))
afters = st.datetimes(
    min_value=dt.datetime(2005, 1, 1), max_value=dt.datetime(2036, 12, 31), timezones=st.just(UTC)
)


@functools.cache
def zone_transitions(zone_name: str, year: int) -> tuple[dt.datetime, ...]:
    """The last whole UTC hour before each clock change of the zone in that year."""
    zone = ZoneInfo(zone_name)
    found, t = [], dt.datetime(year, 1, 1, tzinfo=UTC)
    while t.year == year:
        if (t + HOUR).astimezone(zone).utcoffset() != t.astimezone(zone).utcoffset():
            found.append(t)
        t += HOUR
    return tuple(found) or (dt.datetime(year, 6, 1, tzinfo=UTC),)


def transitions(zone_name: str) -> st.SearchStrategy[dt.datetime]:
    return st.integers(2010, 2030).flatmap(
        lambda year: st.sampled_from(zone_transitions(zone_name, year))
    )


def near_transitions(zone_name: str) -> st.SearchStrategy[dt.datetime]:
    """Instants within a day either side of a DST change of the zone (the interesting ones):
    before it, and after it while a time skipped by it is still to run shifted."""
    return transitions(zone_name).flatmap(
        lambda t: st.integers(-26 * 60, 26 * 60).map(lambda m: t + dt.timedelta(minutes=m))
    )


@functools.cache  # the same wall times come back as hypothesis varies an example
def oracle_instant(wall: dt.datetime, zone_name: str) -> dt.datetime:
    """The owner's rule, computed by dateutil: a skipped time moves forward by the gap
    (``resolve_imaginary``); a repeated one is its first occurrence (fold 0)."""
    aware = dateutil_tz.resolve_imaginary(wall.replace(tzinfo=dateutil_tz.gettz(zone_name)))
    return aware.astimezone(UTC)


def fires_on(schedule, day: dt.date) -> bool:
    if isinstance(schedule, Daily):
        return True
    if isinstance(schedule, Weekly):
        return WEEKDAYS[day.weekday()] in schedule.days
    if isinstance(schedule, Monthly):
        return day.day == min(schedule.day, calendar.monthrange(day.year, day.month)[1])
    raise AssertionError(schedule)


def oracle_next(walls, after: dt.datetime, zone_name: str) -> dt.datetime:
    instants = [oracle_instant(w, zone_name) for w in walls]
    return min(i for i in instants if i > after)


def day_walls(schedule, after: dt.datetime, zone_name: str, days: int):
    start = after.astimezone(ZoneInfo(zone_name)).date() - dt.timedelta(days=2)
    hour, minute = map(int, schedule.time.split(":"))
    for n in range(days):
        day = start + dt.timedelta(days=n)
        if fires_on(schedule, day):
            yield dt.datetime.combine(day, dt.time(hour, minute))


recurring = st.one_of(
    st.builds(lambda t: {"type": "daily", "time": t}, hhmm),
    st.builds(
        lambda d, t: {"type": "weekly", "days": d, "time": t},
        st.lists(st.sampled_from(WEEKDAYS), min_size=1, max_size=7),
        hhmm,
    ),
    # Days 29-31 as often as the rest: they are the ones clamped in shorter months.
    st.builds(
        lambda d, t: {"type": "monthly", "day": d, "time": t},
        st.integers(1, 28) | st.integers(29, 31),
        hhmm,
    ),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), raw=recurring, zone_name=st.sampled_from(ZONES))
def test_daily_weekly_monthly_match_the_oracle(data, raw, zone_name):
    after = data.draw(st.one_of(afters, near_transitions(zone_name)))
    schedule = schedule_parse(raw)
    got = next_after(schedule, after, zone_name)
    assert got == oracle_next(day_walls(schedule, after, zone_name, 70), after, zone_name)
    assert got > after and got.tzinfo is not None


@functools.cache
def zone_gaps(zone_name: str, year: int) -> tuple[tuple[dt.datetime, dt.timedelta, int], ...]:
    """Each time the zone's clocks jump forward that year: the instant, the UTC offset before
    it, and the minutes of wall-clock time skipped."""
    zone = ZoneInfo(zone_name)
    gaps = []
    for t in zone_transitions(zone_name, year):
        before, after = (t.astimezone(zone).utcoffset(), (t + HOUR).astimezone(zone).utcoffset())
        if after > before:
            jump = next(
                t + dt.timedelta(minutes=m)
                for m in range(1, 61)
                if (t + dt.timedelta(minutes=m)).astimezone(zone).utcoffset() == after
            )
            gaps.append((jump, before, (after - before) // dt.timedelta(minutes=1)))
    return tuple(gaps)


@settings(max_examples=100, deadline=None)
@given(
    data=st.data(),
    zone_name=st.sampled_from([z for z in ZONES if z not in ("UTC", "Asia/Kolkata")]),
    year=st.integers(2010, 2030),
    as_cron=st.booleans(),
)
def test_a_skipped_time_still_runs_late_when_asked_just_after_the_clocks_jumped(
    data, zone_name, year, as_cron
):
    """02:30 skipped runs at 03:30: asked at 03:10 (say, the automation was just saved, or an
    earlier skipped slot of the same cron has just run), it is still to come that day."""
    gaps = zone_gaps(zone_name, year)
    assume(gaps)  # Samoa stopped DST in 2021
    jump, offset, gap_minutes = data.draw(st.sampled_from(gaps))
    into = data.draw(st.integers(1, gap_minutes - 1), label="minutes into the gap")
    wall = (jump + offset).replace(tzinfo=None) + dt.timedelta(minutes=into)
    after = jump + dt.timedelta(minutes=data.draw(st.integers(-60, into - 1)))
    raw = (
        {"type": "cron", "expression": f"{wall.minute} {wall.hour} * * *"}
        if as_cron
        else {"type": "daily", "time": f"{wall:%H:%M}"}
    )
    assert next_after(schedule_parse(raw), after, zone_name) == oracle_instant(wall, zone_name)


@settings(max_examples=60, deadline=None)
@given(
    day=st.integers(29, 31),
    time=hhmm,
    zone_name=st.sampled_from(ZONES),
    year=st.integers(2005, 2032),
    month=st.integers(1, 12),
)
def test_monthly_on_day_29_to_31_runs_every_month_on_the_last_day_of_shorter_ones(
    day, time, zone_name, year, month
):
    """49 months in a row (so at least one leap February): one run in each, on the named day or
    the month's last day when it has fewer."""
    schedule = schedule_parse({"type": "monthly", "day": day, "time": time})
    hour, minute = map(int, time.split(":"))
    expected = []
    for n in range(-1, 49):
        y, m = divmod(year * 12 + month - 1 + n, 12)
        last = calendar.monthrange(y, m + 1)[1]
        wall = dt.datetime(y, m + 1, min(day, last), hour, minute)
        expected.append(oracle_instant(wall, zone_name))
    cursor, got = expected[0], []  # the slot of the month before
    for _ in range(49):
        cursor = next_after(schedule, cursor, zone_name)
        got.append(cursor)
    assert got == expected[1:]


# Cron. The strategy writes each field and works out the values it stands for itself; croniter
# is only the implementation under test. The day rule is croniter's (documented; not Vixie
# cron's "*/n" quirk): when day-of-month and day-of-week are both restricted, a day matching
# either runs; when either is "*", the other alone decides.


class CronCase(NamedTuple):
    expression: str
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # cron counts from Sunday = 0
    either_day: bool

    def fires_on(self, day: dt.date) -> bool:
        if day.month not in self.months:
            return False
        on_day, on_weekday = day.day in self.days, day.isoweekday() % 7 in self.weekdays
        return (on_day or on_weekday) if self.either_day else (on_day and on_weekday)

    def walls(self, day: dt.date) -> list[dt.datetime]:
        if not self.fires_on(day):
            return []
        return [dt.datetime.combine(day, dt.time(h, m)) for h in self.hours for m in self.minutes]


PARTS = ("value", "range", "step", "range/step")


@st.composite
def cron_field(
    draw, low: int, high: int, extra: tuple[int, ...] = (), parts=("*", *PARTS), max_parts=3
) -> tuple[str, frozenset[int]]:
    """``*``, or a list of values, ranges (a-b), steps (*/n) and stepped ranges (a-b/n); half the
    time with the ``extra`` values (the hours and days of a clock change) appended."""
    if "*" in parts and draw(st.integers(0, 3)) == 0:
        return "*", frozenset(range(low, high + 1))
    texts, values = [], set()
    for _ in range(draw(st.integers(1, max_parts))):
        kind = draw(st.sampled_from([p for p in parts if p != "*"]))
        a = draw(st.integers(low, high))
        b = draw(st.integers(a, high))
        step = draw(st.integers(1, high - low))
        if kind == "value":
            texts.append(f"{a}")
            values.add(a)
        elif kind == "range":
            texts.append(f"{a}-{b}")
            values.update(range(a, b + 1))
        elif kind == "step":
            texts.append(f"*/{step}")
            values.update(range(low, high + 1, step))
        else:
            texts.append(f"{a}-{b}/{step}")
            values.update(range(a, b + 1, step))
    if extra and draw(st.booleans()):
        texts.extend(map(str, extra))
        values.update(extra)
    return ",".join(texts), frozenset(values)


@st.composite
def crons(draw, near: dt.datetime) -> CronCase:
    """A five-field expression, biased towards the naive wall time ``near`` and the hour after."""
    then = near + dt.timedelta(hours=1)
    minute, minutes = draw(cron_field(0, 59))
    # Keeps the brute-force oracle quick: many minutes only over a few hours.
    few = len(minutes) <= 4
    hour, hours = draw(
        cron_field(
            0,
            23,
            (near.hour, then.hour),
            parts=("*", *PARTS) if few else ("value",),
            max_parts=3 if few else 1,
        )
    )
    day, days = draw(cron_field(1, 31, tuple({near.day, then.day})))
    month, months = draw(cron_field(1, 12, tuple({near.month, then.month})))
    weekday, weekdays = draw(
        cron_field(0, 6, tuple({near.isoweekday() % 7, then.isoweekday() % 7}))
    )
    # A day field naming every value is written "*": how croniter reads a full list such as
    # "1-31" depends on how the other day field is written (and Vixie cron reads it another way
    # again); that corner is not what is under test here.
    if days == frozenset(range(1, 32)):
        day = "*"
    if weekdays == frozenset(range(7)):
        weekday = "*"
    return CronCase(
        " ".join([minute, hour, day, month, weekday]),
        minutes,
        hours,
        days,
        months,
        weekdays,
        either_day=day != "*" and weekday != "*",
    )


def cron_oracle_next(cron: CronCase, after: dt.datetime, zone_name: str) -> dt.datetime:
    """Day by day, every wall time the expression names, from a day before ``after``'s wall
    clock to a day past the first one still to come. UTC offsets lie within -12h..+14h, so an
    earlier wall time is already past; a time skipped by a clock change runs late by the gap,
    a day at most, so a later one cannot come first."""
    local_after = after.astimezone(ZoneInfo(zone_name)).replace(tzinfo=None)
    earliest = local_after - dt.timedelta(hours=26)
    day, last_day = earliest.date(), None
    upcoming: list[dt.datetime] = []
    while last_day is None or day <= last_day:
        walls = [w for w in cron.walls(day) if w > earliest]
        upcoming += [i for i in (oracle_instant(w, zone_name) for w in walls) if i > after]
        if upcoming and last_day is None:
            last_day = day + dt.timedelta(days=1)
        day += dt.timedelta(days=1)
    return min(upcoming)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), zone_name=st.sampled_from(ZONES))
def test_cron_matches_the_oracle(data, zone_name):
    zone = ZoneInfo(zone_name)
    if data.draw(st.booleans(), label="near a clock change"):
        change = data.draw(transitions(zone_name), label="change")
        after = change + dt.timedelta(minutes=data.draw(st.integers(-26 * 60, 26 * 60)))
        near = change.astimezone(zone).replace(tzinfo=None)
    else:
        after = data.draw(afters, label="after")
        near = after.astimezone(zone).replace(tzinfo=None)
    cron = data.draw(crons(near), label="cron")

    leap_cycle = (dt.date(2000, 1, 1) + dt.timedelta(days=n) for n in range(4 * 366))
    if not any(cron.fires_on(day) for day in leap_cycle):  # e.g. "0 0 30,31 2 *"
        with pytest.raises(ValidationFailed, match="never matches a real date"):
            schedule_parse({"type": "cron", "expression": cron.expression})
        return
    schedule = schedule_parse({"type": "cron", "expression": cron.expression})
    assert isinstance(schedule, Cron)
    assert next_after(schedule, after, zone_name) == cron_oracle_next(cron, after, zone_name)


@settings(max_examples=150, deadline=None)
@given(raw=recurring, zone_name=st.sampled_from(ZONES), after=afters)
def test_a_recurring_schedule_runs_once_per_day_it_names(raw, zone_name, after):
    """Over a stretch of days, each day the schedule names has exactly one slot, whatever the
    clock changes: nothing skipped, nothing doubled."""
    schedule = schedule_parse(raw)
    zone = ZoneInfo(zone_name)
    slots, cursor = [], after
    for _ in range(10):
        cursor = next_after(schedule, cursor, zone)
        slots.append(cursor)
    assert slots == sorted(set(slots))
    days = [oracle_instant(w, zone_name) for w in day_walls(schedule, after, zone_name, 400)]
    expected = sorted({i for i in days if i > after})[:10]
    assert slots == expected
