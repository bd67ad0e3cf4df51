"""The demo's tasks and reminders in the owner's words, read by the same reader as the tasks
page's quick add (talorys/lib/when.py): "add buy milk tomorrow 9am" is a task due then, and
"add water plants every monday 8am" a task that repeats, as quick add makes one, while "remind
me every monday to water plants" is a reminder routine. The owner's zone and clock are the
system prompt's clock line (times.py, owner_clock); without it nothing is read as a date."""

from __future__ import annotations

import datetime as dt
from typing import Any
from zoneinfo import ZoneInfo

from talorys.lib.validation import clip
from talorys.lib.when import Understood, schedule_said, shown, understand
from talorys.providers.base import ProviderEvent, ToolCall
from talorys.providers.demo.events import call, say, tool_call
from talorys.providers.demo.parse import capitalised
from talorys.providers.demo.turn import field

# Automation.NAME_MAX / MESSAGE_MAX (automations/models.py): the provider layer cannot import it.
_NAME_CHARS = 200
_MESSAGE_CHARS = 4_000


def read(text: str, clock: dt.datetime | None, titled: bool = True) -> Understood | None:
    """``text`` read at the owner's clock, or None when the demo does not know their zone.
    ``titled``: as understand takes it (False: the words are only a time)."""
    if clock is None or not isinstance(clock.tzinfo, ZoneInfo):
        return None
    return understand(text, zone=clock.tzinfo, now=clock, titled=titled)


def reminder_call(what: str, schedule: dict[str, Any] | None, number: int) -> ToolCall:
    """The create_automation call for a reminder of ``what`` (once or repeating)."""
    what = capitalised(what)
    name = clip(what, _NAME_CHARS)
    arguments = {
        "name": name,
        "kind": "reminder",
        # A reminder shows its name; the whole text only when the name had to be cut.
        "message": "" if name == what else what[:_MESSAGE_CHARS],
        "schedule": schedule,
    }
    return tool_call(number, "create_automation", arguments)


def task_step(
    what: str, usable: set[str], number: int, clock: dt.datetime | None
) -> list[ProviderEvent]:
    """ "add buy milk tomorrow 9am": create_task with its due date; "add water plants every
    monday" create_task with the repeat (its first due date is the schedule's)."""
    got = read(what, clock)
    if got is not None and got.alone:  # "add tomorrow 9am": what is due then?
        return say(
            f"“{what}” is only a date: what should I add? Say it like “add call Ana {what}”."
        )
    if "create_task" not in usable:
        return say("I can't use the create_task tool right now, so I couldn't do that.")
    arguments: dict[str, Any] = {"title": capitalised(got.title if got else what)}
    if got is not None and got.due is not None:
        arguments["due_at"] = got.due.isoformat(timespec="seconds")
    if got is not None and got.schedule is not None:
        arguments["repeat"] = got.schedule
    return call(tool_call(number, "create_task", arguments))


def task_added(data: dict[str, Any], arguments: dict[str, Any], clock: dt.datetime | None) -> str:
    title = field(data, "task", "title") or arguments.get("title")
    due = field(data, "task", "due_at") or arguments.get("due_at")
    try:
        at = dt.datetime.fromisoformat(str(due)) if due else None
    except ValueError:
        at = None
    repeat = field(data, "task", "repeat") or arguments.get("repeat")
    said = schedule_said(repeat) if isinstance(repeat, dict) else ""
    repeats = f", {said[:1].lower()}{said[1:]}" if said else ""
    if at is None or clock is None:
        return f"Added the task “{title}”{repeats}."
    first = " first" if repeats else ""
    return f"Added the task “{title}”{repeats},{first} due {shown(at, clock)}."


def routine_set(what: str, schedule: dict[str, Any]) -> str:
    said = schedule_said(schedule)
    return (
        f"I'll remind you to {what} {said[0].lower()}{said[1:]}: a reminder routine, which you "
        "can pause or change on the Automations page."
    )
