"""talorys/lib/when.py: the owner's words read as a due date or a repeating schedule, in their
zone, across daylight-saving changes, and words that only look like dates left alone."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest

from talorys.lib.errors import ValidationFailed
from talorys.lib.when import task_read, understand

PARIS = ZoneInfo("Europe/Paris")
NEW_YORK = ZoneInfo("America/New_York")
TOKYO = ZoneInfo("Asia/Tokyo")


def at(zone: ZoneInfo, *parts: int) -> dt.datetime:
    year, month, day, hour, minute = parts
    return dt.datetime(year, month, day, hour, minute, tzinfo=zone)


def test_tomorrow_at_nine_read_at_half_past_eleven_at_night_is_the_next_day() -> None:
    now = at(PARIS, 2026, 12, 2, 23, 30)
    got = understand("buy milk tomorrow 9am", zone=PARIS, now=now)
    assert got.title == "buy milk"
    assert got.due == at(PARIS, 2026, 12, 3, 9, 0)
    assert got.schedule is None
    assert got.said == "Due Thu 3 Dec, 09:00"


def test_the_owners_zone_decides_which_day_tomorrow_is() -> None:
    # 23:30 in New York is already the 3rd in UTC and Tokyo: "tomorrow" is New York's 3rd.
    now = at(NEW_YORK, 2026, 12, 2, 23, 30)
    got = understand("call Ana tomorrow 9am", zone=NEW_YORK, now=now)
    assert got.due == at(NEW_YORK, 2026, 12, 3, 9, 0)
    assert got.due.utcoffset() == dt.timedelta(hours=-5)
    tokyo = understand("call Ana tomorrow 9am", zone=TOKYO, now=now)
    assert tokyo.due == at(TOKYO, 2026, 12, 4, 9, 0)


@pytest.mark.parametrize(
    ("text", "title", "due"),
    [
        ("call mom on friday", "call mom", (2026, 12, 4, 9, 0)),
        ("pay rent next monday at 10", "pay rent", (2026, 12, 7, 10, 0)),
        ("dentist 3 dec 14:30", "dentist", (2026, 12, 3, 14, 30)),
        ("meeting at 5pm", "meeting", (2026, 12, 2, 17, 0)),
        ("call Sam at 9", "call Sam", (2026, 12, 3, 9, 0)),
        ("call Sam friday 5pm", "call Sam", (2026, 12, 4, 17, 0)),
        ("sat 10am gym", "gym", (2026, 12, 5, 10, 0)),
        # The time is read here, not by dateparser (which keeps the current time for "at 9").
        ("call Sam tomorrow at 9", "call Sam", (2026, 12, 3, 9, 0)),
        ("call Sam tonight at 9", "call Sam", (2026, 12, 2, 21, 0)),
        ("call Sam at 9 a.m. tomorrow", "call Sam", (2026, 12, 3, 9, 0)),
        ("report in 1 hour and 30 minutes", "report", (2026, 12, 2, 13, 30)),
    ],
)
def test_one_off_dates_and_times(text: str, title: str, due: tuple[int, ...]) -> None:
    got = understand(text, zone=PARIS, now=at(PARIS, 2026, 12, 2, 12, 0))
    assert (got.title, got.due) == (title, at(PARIS, *due))


def test_a_day_without_a_time_is_at_nine() -> None:
    got = understand("call mom tomorrow", zone=PARIS, now=at(PARIS, 2026, 12, 2, 23, 30))
    assert got.due == at(PARIS, 2026, 12, 3, 9, 0)


def test_in_two_hours_counts_real_time_across_the_autumn_change() -> None:
    # 01:30 CEST on 25 Oct 2026, + 2 hours of real time = 02:30 CET (the hour repeats).
    now = dt.datetime(2026, 10, 24, 23, 30, tzinfo=dt.UTC).astimezone(PARIS)
    got = understand("report in 2 hours", zone=PARIS, now=now)
    assert got.title == "report"
    assert got.due is not None
    assert got.due.astimezone(dt.UTC) - now.astimezone(dt.UTC) == dt.timedelta(hours=2)
    assert got.due.astimezone(dt.UTC) == dt.datetime(2026, 10, 25, 1, 30, tzinfo=dt.UTC)


def test_a_time_in_the_spring_gap_is_shifted_by_the_gap() -> None:
    # 29 Mar 2026: Paris skips 02:00-03:00; "2:30am" that day is 03:30 CEST, as schedules do.
    got = understand("water tomorrow 2:30am", zone=PARIS, now=at(PARIS, 2026, 3, 28, 12, 0))
    assert got.due is not None
    assert got.due.astimezone(dt.UTC) == dt.datetime(2026, 3, 29, 1, 30, tzinfo=dt.UTC)
    assert got.said == "Due Sun 29 Mar, 03:30"


def test_summer_offset_is_kept_after_the_change() -> None:
    got = understand("call Ana tomorrow 9am", zone=PARIS, now=at(PARIS, 2026, 3, 29, 8, 0))
    assert got.due is not None
    assert got.due.utcoffset() == dt.timedelta(hours=2)


@pytest.mark.parametrize(
    "text",
    [
        "I may call Sam",
        "march on",
        "read the 5th chapter",
        "fix 8 bugs",
        "buy 2 apples for 3.50",
        "read 2024 report",
        "buy milk",
        "",
    ],
)
def test_words_that_only_look_like_dates_stay_in_the_title(text: str) -> None:
    got = understand(text, zone=PARIS, now=at(PARIS, 2026, 12, 2, 12, 0))
    assert got.title == text
    assert not got.dated
    assert got.said == ""


def test_date_words_alone_are_kept_as_the_title() -> None:
    got = understand("tomorrow 9am", zone=PARIS, now=at(PARIS, 2026, 12, 2, 12, 0))
    assert got.title == "tomorrow 9am"
    assert not got.dated
    assert (got.alone, got.words, got.said) == (True, "tomorrow 9am", "Due Thu 3 Dec, 09:00")


@pytest.mark.parametrize(
    ("text", "title", "schedule", "said"),
    [
        (
            "water plants every monday",
            "water plants",
            {"type": "weekly", "days": ["mon"], "time": "09:00"},
            "Every Monday at 09:00",
        ),
        (
            "stretch every day at 8",
            "stretch",
            {"type": "daily", "time": "08:00"},
            "Every day at 08:00",
        ),
        (
            "standup every weekday 9am",
            "standup",
            {"type": "weekly", "days": ["mon", "tue", "wed", "thu", "fri"], "time": "09:00"},
            "Every weekday at 09:00",
        ),
        (
            "pay rent every month on the 1st",
            "pay rent",
            {"type": "monthly", "day": 1, "time": "09:00"},
            "Every month on the 1st at 09:00",
        ),
        (
            "remind me every monday to water plants",
            "water plants",
            {"type": "weekly", "days": ["mon"], "time": "09:00"},
            "Every Monday at 09:00",
        ),
        (
            "gym every tuesday and thursday 18:30",
            "gym",
            {"type": "weekly", "days": ["tue", "thu"], "time": "18:30"},
            "Every Tuesday and Thursday at 18:30",
        ),
    ],
)
def test_repeating_phrases_are_schedules(
    text: str, title: str, schedule: dict[str, object], said: str
) -> None:
    got = understand(text, zone=PARIS, now=at(PARIS, 2026, 12, 2, 12, 0))
    assert (got.title, got.schedule, got.said) == (title, schedule, said)
    assert got.due is None


def test_a_repeating_schedule_is_one_automations_accepts() -> None:
    from talorys.lib.schedules import schedule_parse

    for text in ("a every weekday 9am", "b every month on the 31st", "c every sunday noon"):
        got = understand(text, zone=PARIS, now=at(PARIS, 2026, 12, 2, 12, 0))
        assert got.schedule is not None
        schedule_parse(got.schedule)


def test_a_repeated_autumn_time_is_its_first_occurrence() -> None:
    # 25 Oct 2026: Paris goes through 02:00-03:00 twice; 02:30 is the summer-time one.
    got = understand("call tomorrow 2:30am", zone=PARIS, now=at(PARIS, 2026, 10, 24, 12, 0))
    assert got.due is not None
    assert got.due.utcoffset() == dt.timedelta(hours=2)
    assert got.due.astimezone(dt.UTC) == dt.datetime(2026, 10, 25, 0, 30, tzinfo=dt.UTC)


def test_new_years_eve_at_half_past_eleven_names_the_year() -> None:
    got = understand("Buy Bread TOMORROW 9AM", zone=TOKYO, now=at(TOKYO, 2026, 12, 31, 23, 30))
    assert (got.title, got.due) == ("Buy Bread", at(TOKYO, 2027, 1, 1, 9, 0))
    assert got.said == "Due Fri 1 Jan 2027, 09:00"


def test_a_due_field_reads_date_words_alone() -> None:
    got = understand("tomorrow 9am", zone=PARIS, now=at(PARIS, 2026, 12, 2, 12, 0), titled=False)
    assert (got.title, got.due) == ("", at(PARIS, 2026, 12, 3, 9, 0))


# The weekday rule (the module's docstring): from each day of the week Mon 30 Nov - Sun 6 Dec
# 2026, the day "friday", "next friday" and "this friday" name.
@pytest.mark.parametrize(
    ("today", "friday", "this_friday"),
    [
        (30, 4, 4),  # Monday
        (1, 4, 4),
        (2, 4, 4),
        (3, 4, 4),  # Thursday: "next friday" is tomorrow
        (4, 11, 4),  # Friday: "friday" is a week later, "this friday" today
        (5, 11, 11),
        (6, 11, 11),  # Sunday
    ],
)
def test_a_named_weekday_is_the_first_one_after_today(
    today: int, friday: int, this_friday: int
) -> None:
    now = at(PARIS, 2026, 11 if today == 30 else 12, today, 12, 0)
    for words in ("friday", "on friday", "next friday", "next fri", "by Friday"):
        got = understand(f"call Ana {words}", zone=PARIS, now=now)
        assert (got.title, got.due) == ("call Ana", at(PARIS, 2026, 12, friday, 9, 0)), words
    got = understand("call Ana this friday 5pm", zone=PARIS, now=now)
    assert got.due == at(PARIS, 2026, 12, this_friday, 17, 0)


def test_a_weekday_with_a_calendar_date_is_that_date() -> None:
    got = understand("dentist fri 24 dec", zone=PARIS, now=at(PARIS, 2026, 12, 3, 12, 0))
    assert (got.title, got.due) == ("dentist", at(PARIS, 2026, 12, 24, 9, 0))


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("pick up parcel friday 5pm", "friday 5pm"),
        ("call Sam at 9 a.m. tomorrow", "at 9 am tomorrow"),
        ("buy milk", ""),
        ("water plants every monday 8am", "every monday 8am"),
    ],
)
def test_the_words_read_as_the_date_are_said(text: str, words: str) -> None:
    assert understand(text, zone=PARIS, now=at(PARIS, 2026, 12, 3, 12, 0)).words == words


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "Say what to do: the text is empty."),
        ("tomorrow 9am", "“tomorrow 9am” is only a date (due Fri 4 Dec, 09:00): say what to do"),
        ("every monday", "“every monday” is only a date (every Monday at 09:00)"),
    ],
)
def test_a_quick_capture_refuses_no_title(text: str, message: str) -> None:
    with pytest.raises(ValidationFailed) as refused:
        task_read(text, zone=PARIS, now=at(PARIS, 2026, 12, 3, 12, 0), field="text")
    assert refused.value.message.startswith(message)
    assert refused.value.details == {"field": "text"}
    got = task_read("call Ana tomorrow 9am", zone=PARIS, now=at(PARIS, 2026, 12, 3, 12, 0))
    assert (got.title, got.due) == ("call Ana", at(PARIS, 2026, 12, 4, 9, 0))
