"""Schedules in the owner's time zone: validation, DST days, and property tests against an
independent oracle (dateutil's own tz database reader and ``resolve_imaginary``, and brute-force
expansion of the schedule's dates)."""

from __future__ import annotations

import calendar
import datetime as dt
from zoneinfo import ZoneInfo

import pytest
from dateutil import tz as dateutil_tz
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from automations.schedules import (
    WEEKDAYS,
    Cron,
    Daily,
    Monthly,
    Weekly,
    describe,
    next_after,
    schedule_parse,
)
from talorys.errors import ValidationFailed

UTC = dt.UTC
PARIS = ZoneInfo("Europe/Paris")
NEW_YORK = ZoneInfo("America/New_York")


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
# Mostly near transitions (their hours), sometimes anywhere.
afters = st.datetimes(
    min_value=dt.datetime(2005, 1, 1), max_value=dt.datetime(2036, 12, 31), timezones=st.just(UTC)
)


def near_transitions(zone_name: str) -> st.SearchStrategy[dt.datetime]:
    """Instants within a day before a DST change of the zone (the interesting ones)."""
    zone = ZoneInfo(zone_name)

    def transitions(year: int) -> list[dt.datetime]:
        found, t = [], dt.datetime(year, 1, 1, tzinfo=UTC)
        step = dt.timedelta(hours=1)
        while t.year == year:
            if (t + step).astimezone(zone).utcoffset() != t.astimezone(zone).utcoffset():
                found.append(t)
            t += step
        return found or [dt.datetime(year, 6, 1, tzinfo=UTC)]

    return st.integers(2010, 2030).flatmap(
        lambda year: st.sampled_from(transitions(year)).flatmap(
            lambda t: st.integers(-26 * 60, 60).map(lambda m: t + dt.timedelta(minutes=m))
        )
    )


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
    st.builds(lambda d, t: {"type": "monthly", "day": d, "time": t}, st.integers(1, 31), hhmm),
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), raw=recurring, zone_name=st.sampled_from(ZONES))
def test_daily_weekly_monthly_match_the_oracle(data, raw, zone_name):
    after = data.draw(st.one_of(afters, near_transitions(zone_name)))
    schedule = schedule_parse(raw)
    got = next_after(schedule, after, zone_name)
    assert got == oracle_next(day_walls(schedule, after, zone_name, 70), after, zone_name)
    assert got > after and got.tzinfo is not None


@st.composite
def crons(draw) -> tuple[str, list[int], list[int], list[int] | None]:
    minutes = sorted(draw(st.sets(st.integers(0, 59), min_size=1, max_size=4)))
    hours = sorted(draw(st.sets(st.integers(0, 23), min_size=1, max_size=6)))
    dows = draw(st.none() | st.sets(st.integers(0, 6), min_size=1, max_size=7).map(sorted))
    expression = " ".join(
        [
            ",".join(map(str, minutes)),
            ",".join(map(str, hours)),
            "*",
            "*",
            "*" if dows is None else ",".join(map(str, dows)),
        ]
    )
    return expression, minutes, hours, dows


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), cron=crons(), zone_name=st.sampled_from(ZONES))
def test_cron_matches_the_oracle(data, cron, zone_name):
    expression, minutes, hours, dows = cron
    after = data.draw(st.one_of(afters, near_transitions(zone_name)))
    schedule = schedule_parse({"type": "cron", "expression": expression})
    assert isinstance(schedule, Cron)
    start = after.astimezone(ZoneInfo(zone_name)).date() - dt.timedelta(days=2)
    walls = [
        dt.datetime.combine(start + dt.timedelta(days=n), dt.time(h, m))
        for n in range(12)
        # cron counts days of the week from Sunday = 0
        if dows is None or (start + dt.timedelta(days=n)).isoweekday() % 7 in dows
        for h in hours
        for m in minutes
    ]
    assert next_after(schedule, after, zone_name) == oracle_next(walls, after, zone_name)


@settings(max_examples=200, deadline=None)
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
