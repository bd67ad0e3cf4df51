"""When a demo reminder is due: the owner's clock as the system prompt states it, and "in 20
minutes", "at 5pm" or "tomorrow at 9" read against it; and how the answer says the time.

The words here (WEEKDAYS, AMOUNT, UNIT) are also how parse.py tells where a reminder's time
starts in the owner's message.
"""

from __future__ import annotations

import datetime as dt
import re
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from talorys.providers.base import ChatMessage

WEEKDAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20,
    "thirty": 30, "forty-five": 45, "half a": 0.5, "half an": 0.5,
}  # fmt: skip
AMOUNT = r"\d+|" + "|".join(sorted(_NUMBERS, key=len, reverse=True))
UNIT = r"min(?:ute)?s?|h(?:ou)?rs?|days?"

# agent/prompt.py, local_time_line: "Thursday 15 January 2026, 14:30 (Europe/Paris, UTC+01:00)".
_CLOCK = re.compile(
    r"The owner's local time: \w+ (?P<date>\d{1,2} \w+ \d{4}), (?P<time>\d{1,2}:\d{2}) "
    r"\((?P<zone>[^,()]+), UTC(?P<offset>[+-]\d{2}:\d{2})?\)"
)
_DAY = rf"today|tonight|tomorrow|on (?:{WEEKDAYS})"
_AT = re.compile(
    rf"^(?:(?P<day_before>{_DAY}),? )?(?:at )?"
    r"(?:(?P<word>noon|midnight)|(?P<hour>\d{1,2})(?:[:.](?P<minute>\d{2}))?"
    r"(?: ?(?P<half>[ap])\.?m\.?)?(?: o'?clock)?)"
    rf"(?: (?P<day_after>{_DAY}))?$"
)
_DURATION = re.compile(
    rf"^in (?P<n1>{AMOUNT}) (?P<u1>{UNIT})(?:,? (?:and )?(?P<n2>{AMOUNT}) (?P<u2>{UNIT}))?$"
)
_MAX_AHEAD = dt.timedelta(days=366)


class NoTime(ValueError):
    """The reminder's time could not be read; the message says what was wrong."""


def owner_clock(messages: list[ChatMessage]) -> dt.datetime | None:
    """The owner's local time (aware, in their zone) as the system prompt states it.

    The demo reads the same clock line a model reads, so each step stays a function of
    ``messages`` alone. The prompt gives minutes only: "in 2 minutes" counts from the minute.
    """
    for message in messages:
        match = _CLOCK.search(message.content) if message.role == "system" else None
        if match is None:
            continue
        try:
            naive = dt.datetime.strptime(f"{match['date']} {match['time']}", "%d %B %Y %H:%M")
        except ValueError:
            return None
        offset = match["offset"] or "+00:00"
        sign = -1 if offset[0] == "-" else 1
        fixed = dt.timezone(sign * dt.timedelta(hours=int(offset[1:3]), minutes=int(offset[4:])))
        zone: dt.tzinfo
        try:
            zone = ZoneInfo(match["zone"].strip())
        except (ZoneInfoNotFoundError, ValueError):
            zone = fixed
        return naive.replace(tzinfo=fixed).astimezone(zone)
    return None


def reminder_time(when: str, now: dt.datetime) -> dt.datetime:
    """The instant ``when`` means, in ``now``'s zone: "in 20 minutes", "in 1 hour and 30
    minutes", "at 5pm", "at 17:30 tomorrow", "tomorrow at 9", "on friday at noon".

    A time of day without a day is the next time the clock shows it (tomorrow when it has passed
    today); a bare hour such as "at 5" is whichever of 05:00 and 17:00 comes first that day, and
    "tonight at 9" is 21:00. Raises NoTime saying what was wrong.
    """
    text = " ".join(when.lower().split())
    zone = now.tzinfo
    duration = _DURATION.match(text)
    if duration is not None:
        ahead = _minutes(duration["n1"], duration["u1"]) + (
            _minutes(duration["n2"], duration["u2"]) if duration["n2"] else 0
        )
        if ahead < 1:
            raise NoTime("That is not a time in the future.")
        if ahead > _MAX_AHEAD.total_seconds() / 60:
            raise NoTime("That is more than a year ahead.")
        return (now.astimezone(dt.UTC) + dt.timedelta(minutes=ahead)).astimezone(zone)
    match = _AT.match(text)
    if match is None:
        if text.startswith("every"):
            raise NoTime("The demo only sets one-time reminders, not repeating ones.")
        if re.fullmatch(_DAY, text):
            raise NoTime(f"Tell me what time {text}, e.g. “{text} at 9am”.")
        raise NoTime(f"I couldn't read “{when}” as a time.")
    if match["day_before"] and match["day_after"]:
        raise NoTime(f"I couldn't read “{when}” as a time: it names two days.")
    day = match["day_before"] or match["day_after"]
    hour, minute = _time_of_day(match)
    bare = not (match["word"] or match["minute"] or match["half"]) and 1 <= hour <= 11
    hours = ([hour + 12] if day == "tonight" else [hour, hour + 12]) if bare else [hour]
    today = now.date()
    if day is None:
        dates = [today, today + dt.timedelta(days=1)]
    elif day == "tomorrow" or (match["word"] == "midnight" and day in ("today", "tonight")):
        dates = [today + dt.timedelta(days=1)]
    elif day.startswith("on "):
        ahead = (WEEKDAYS.split("|").index(day[3:]) - today.weekday()) % 7
        dates = [today + dt.timedelta(days=ahead), today + dt.timedelta(days=ahead + 7)]
    else:  # today, tonight
        dates = [today]
    for date in dates:
        for h in hours:
            # fold=0, as schedules read wall times: a time in a DST gap is shifted by the gap.
            at = dt.datetime.combine(date, dt.time(h, minute), tzinfo=zone).astimezone(dt.UTC)
            if at > now:
                return at.astimezone(zone)
    raise NoTime(f"{hours[-1]:02}:{minute:02} {day} has already passed.")


def _minutes(amount: str, unit: str) -> float:
    count = int(amount) if amount.isdigit() else _NUMBERS[amount]
    return count * (1 if unit.startswith("m") else 60 if unit.startswith("h") else 1440)


def _time_of_day(match: re.Match[str]) -> tuple[int, int]:
    if match["word"]:
        return (12, 0) if match["word"] == "noon" else (0, 0)
    hour, minute = int(match["hour"]), int(match["minute"] or 0)
    spoken = match.group(0)
    if match["half"]:
        if not 1 <= hour <= 12:
            raise NoTime(f"“{spoken}” is not a time of day.")
        hour = hour % 12 + (12 if match["half"] == "p" else 0)
    if hour > 23 or minute > 59:
        raise NoTime(f"“{spoken}” is not a time of day.")
    return hour, minute


def spoken(at: dt.datetime, clock: dt.datetime | None) -> str:
    """When, as the answer says it: at 14:32, tomorrow at 09:00, on Friday at 09:00, or with
    the date when it is a week or more ahead."""
    if clock is None:
        return f"on {at:%A %d %B} at {at:%H:%M}"
    local = at.astimezone(clock.tzinfo)
    days = (local.date() - clock.date()).days
    if days == 0:
        return f"at {local:%H:%M}"
    if days == 1:
        return f"tomorrow at {local:%H:%M}"
    if 1 < days < 7:
        return f"on {local:%A} at {local:%H:%M}"
    return f"on {local:%A %d %B} at {local:%H:%M}"
