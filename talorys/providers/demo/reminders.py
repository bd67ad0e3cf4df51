"""The demo's reminders at a time ("remind me to X in 20 minutes"): the create_automation call
for a one-time reminder, and the answer once it is set. The time is read by
talorys/lib/when.py, as the tasks page's quick add reads it; times.py says it."""

from __future__ import annotations

import datetime as dt
from typing import Any

from talorys.lib.when import shown
from talorys.providers.base import ProviderEvent
from talorys.providers.demo.dates import read, reminder_call, routine_set
from talorys.providers.demo.events import call, say
from talorys.providers.demo.parse import DemoRequest
from talorys.providers.demo.times import spoken
from talorys.providers.demo.turn import field

_EXAMPLES = "“in 20 minutes”, “at 17:30” or “tomorrow at 9am”"


def timed_reminder(
    request: DemoRequest, usable: set[str], number: int, clock: dt.datetime | None
) -> list[ProviderEvent]:
    """The first step of a timed reminder: the call, or why it cannot be set."""
    what = request.what
    if "create_automation" not in usable:
        return say(
            f"I can't schedule reminders here, so I haven't set “{what}” {request.when}. Say "
            f"“remind me to {what}” without a time and I'll add it as a task."
        )
    got = read(request.when, clock, titled=False)
    if clock is None or got is None:
        return say(f"I don't know your local time, so I haven't set “{what}” {request.when}.")
    if got.schedule is not None:  # "every monday": a reminder routine
        return call(reminder_call(what, got.schedule, number))
    at = got.due
    if at is None:
        problem = f"I couldn't read “{request.when}” as a time."
    elif at <= clock:
        problem = f"That time ({shown(at, clock)}) has already passed."
    else:
        once = {"type": "once", "at": at.isoformat(timespec="seconds")}
        return call(reminder_call(what, once, number))
    return say(f"{problem} So I haven't set the reminder “{what}”. Say the time like {_EXAMPLES}.")


def reminder_set(
    what: str, data: dict[str, Any], arguments: dict[str, Any], clock: dt.datetime | None
) -> str:
    schedule = arguments.get("schedule")
    if isinstance(schedule, dict) and schedule.get("type") in ("daily", "weekly", "monthly"):
        return routine_set(what, schedule)
    when = field(data, "automation", "next_run_at") or (
        schedule.get("at") if isinstance(schedule, dict) else None
    )
    try:
        at = dt.datetime.fromisoformat(str(when))
    except ValueError:
        return f"I'll remind you to {what}."
    return f"I'll remind you to {what} {spoken(at, clock)}."
