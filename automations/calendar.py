"""The calendar feed (GET /calendar/<secret>.ics): open tasks with a due date, and the next runs
of the enabled automations, as iCalendar (RFC 5545) that a phone or desktop calendar subscribes
to once.

Times are written in the owner's zone (a TZID with its VTIMEZONE, as yearly rules:
automations/vtimezone.py), so a calendar shows a routine
at its wall-clock time across daylight-saving changes. A schedule that RRULE can say (daily,
weekly, monthly) is one event from its next run with that rule; RFC 5545 reads a local time in a
gap as shifted by the gap and a repeated one as its first occurrence, which is what
talorys/lib/schedules.py does, so the calendar's expansion and the app's runs agree. A cron
expression is not in general an RRULE (croniter's day-of-month OR day-of-week, steps, lists of
hours with different minutes): its next CRON_OCCURRENCES runs are separate events instead.
A repeating task (talorys/workspace/services/tasks.py) is one event from its due date with its
repeat's RRULE at the repeat's time (a task's due date may be off the rule, moved by hand: the
calendar then shows it, and the rule's dates after it); a cron repeat shows the due date only.

The secret that guards the URL is the owner app's (talorys/owner/services/calendar.py).
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from django.utils import timezone

from automations.models import Automation
from automations.vtimezone import vtimezone
from talorys.lib.errors import ValidationFailed
from talorys.lib.schedules import (
    Cron,
    Daily,
    Monthly,
    Once,
    Schedule,
    Weekly,
    describe,
    repeat_parse,
    schedule_parse,
    upcoming,
)
from talorys.workspace.models import Task

if TYPE_CHECKING:
    from icalendar import Event

# How many runs of a cron schedule the feed lists; a calendar refetches the feed every few hours,
# so the list moves on with it.
CRON_OCCURRENCES = 20
# What the feed carries at most of each kind: a feed is fetched often and whole.
MAX_TASKS = 1000
MAX_AUTOMATIONS = 500
# A reminder's text or a task's details in the event's description, cut to this.
DESCRIPTION_MAX = 1000
UID_DOMAIN = "talorys"


def _rrule(schedule: Daily | Weekly | Monthly) -> dict[str, object]:
    if isinstance(schedule, Daily):
        return {"freq": "daily"}
    if isinstance(schedule, Weekly):
        return {"freq": "weekly", "byday": [day[:2].upper() for day in schedule.days]}
    if schedule.day <= 28:
        return {"freq": "monthly", "bymonthday": [schedule.day]}
    # The earlier of that day and the month's last: "on the 31st" runs on the 30th in June.
    return {"freq": "monthly", "bymonthday": [schedule.day, -1], "bysetpos": [1]}


def _wall_start(
    schedule: Daily | Weekly | Monthly, first: dt.datetime, zone: ZoneInfo
) -> dt.datetime:
    """The rule's DTSTART: the schedule's wall time on the first run's local day. A run shifted
    out of a gap (02:30 run at 03:30) starts at 02:30, which the calendar shifts the same way."""
    hour, minute = (int(part) for part in schedule.time.split(":"))
    local = first.astimezone(zone)
    return local.replace(hour=hour, minute=minute, second=0, microsecond=0, fold=0)


def _event(uid: str, summary: str, start: dt.datetime, description: str, now: dt.datetime) -> Event:
    from icalendar import Event

    event = Event()
    event.add("uid", f"{uid}@{UID_DOMAIN}")
    event.add("dtstamp", now)
    event.add("dtstart", start)
    event.add("summary", summary)
    if description:
        event.add("description", description)
    return event


def _automation_events(
    automation: Automation, schedule: Schedule, zone: ZoneInfo, now: dt.datetime, details: bool
) -> list[Event]:
    first = automation.next_run_at
    assert first is not None  # enabled rows always have one (a table constraint)
    description = describe(schedule, zone)
    if details and automation.kind == Automation.Kind.REMINDER and automation.message:
        description += "\n\n" + automation.message[:DESCRIPTION_MAX]
    uid = f"automation-{automation.pk}"
    if isinstance(schedule, Once):
        return [_event(uid, automation.name, first.astimezone(zone), description, now)]
    if isinstance(schedule, Cron):
        runs = [first, *upcoming(schedule, first, zone, CRON_OCCURRENCES - 1)]
        return [
            _event(
                f"{uid}-{run:%Y%m%dT%H%M%SZ}",
                automation.name,
                run.astimezone(zone),
                description,
                now,
            )
            for run in runs
        ]
    event = _event(uid, automation.name, _wall_start(schedule, first, zone), description, now)
    event.add("rrule", _rrule(schedule))
    return [event]


def _task_event(task: Task, zone: ZoneInfo, now: dt.datetime, details: bool) -> Event:
    assert task.due_at is not None  # the query's filter
    event = _event(
        f"task-{task.pk}",
        task.title,
        task.due_at.astimezone(zone),
        task.details[:DESCRIPTION_MAX] if details else "",
        now,
    )
    try:
        repeat = repeat_parse(task.repeat) if task.repeat else None
    except ValidationFailed:  # never stored unchecked; a feed shows the due date regardless
        repeat = None
    if isinstance(repeat, Daily | Weekly | Monthly):
        hour, minute = (int(part) for part in repeat.time.split(":"))
        event.add("rrule", _rrule(repeat) | {"byhour": [hour], "byminute": [minute]})
    return event


def calendar_feed(*, zone: ZoneInfo, details: bool = False) -> bytes:
    """The feed as iCalendar bytes: open tasks with a due date, then the enabled automations.

    ``details``: the owner's ``calendar_feed_details``, whether a task's details and a reminder's
    text are in its event's description; without them the feed holds names and times (and a
    schedule in words) only, since anyone with its URL reads it."""
    # icalendar is imported when a feed is made, not in every web process (about 9 MB each).
    from icalendar import Calendar

    now = timezone.now()
    calendar = Calendar()
    calendar.add("prodid", "-//Talorys//Calendar feed//EN")
    calendar.add("version", "2.0")
    calendar.add("calscale", "GREGORIAN")
    calendar.add("x-wr-calname", "Talorys")
    calendar.add("x-wr-timezone", zone.key)
    # Binned rows (deleted_at set) are out: the bin is not the calendar.
    tasks = Task.objects.filter(
        status=Task.Status.OPEN, due_at__isnull=False, deleted_at__isnull=True
    ).order_by("due_at", "id")
    for task in tasks[:MAX_TASKS]:
        calendar.add_component(_task_event(task, zone, now, details))
    automations = Automation.objects.filter(
        enabled=True, next_run_at__isnull=False, deleted_at__isnull=True
    )
    for automation in automations.order_by("next_run_at", "id")[:MAX_AUTOMATIONS]:
        try:
            schedule = schedule_parse(automation.schedule)
        except ValidationFailed:  # a row the schema no longer reads: left out, not a failed feed
            continue
        for event in _automation_events(automation, schedule, zone, now, details):
            calendar.add_component(event)
    ruled = vtimezone(zone.key)
    if ruled is not None and zone.key in calendar.get_used_tzids():
        calendar.add_component(ruled)
    calendar.add_missing_timezones()  # a zone vtimezone() cannot say by rules: icalendar's
    return calendar.to_ical()
