"""The owner's clock as the system prompt states it, which the demo reads times against
(talorys/lib/when.py reads them, as for the tasks page's quick add), and how an answer says a
time.
"""

from __future__ import annotations

import datetime as dt
import re
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from talorys.providers.base import ChatMessage

# agent/prompt.py, local_time_line: "Thursday 15 January 2026, 14:30 (Europe/Paris, UTC+01:00)".
_CLOCK = re.compile(
    r"The owner's local time: \w+ (?P<date>\d{1,2} \w+ \d{4}), (?P<time>\d{1,2}:\d{2}) "
    r"\((?P<zone>[^,()]+), UTC(?P<offset>[+-]\d{2}:\d{2})?\)"
)


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
