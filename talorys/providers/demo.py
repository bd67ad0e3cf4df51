"""The demo provider: no model server, deterministic, and labelled as demo.

It understands a few plain requests and acts on them the way a model would, by calling the
registered tools (the runner and executor run them for real), then answers from the tool
results. Everything else gets a short note saying what it understands.

Each step reads only ``messages``: the owner's last message says what to do, and the tool
messages after it say what has been done so far in this turn.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from talorys.providers.base import ChatMessage, Finish, ProviderEvent, TextDelta, ToolCall

HELP = (
    "This is the demo assistant: no AI model is configured, so I only understand a few plain "
    "requests:\n"
    "- “add a task to buy milk” or “remind me to call Ana”\n"
    "- “remind me to call Sam in 20 minutes” (or “at 17:30”, “tomorrow at 9am”)\n"
    "- “remember that my sister is called Ana”\n"
    "- “what are my open tasks?”\n"
    "- “delete the task buy milk”\n"
    "- “create a note Groceries: eggs, bread”\n"
    "Configure a model in Settings to chat freely."
)

_WEEKDAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20,
    "thirty": 30, "forty-five": 45, "half a": 0.5, "half an": 0.5,
}  # fmt: skip
_AMOUNT = r"\d+|" + "|".join(sorted(_NUMBERS, key=len, reverse=True))
_UNIT = r"min(?:ute)?s?|h(?:ou)?rs?|days?"
# Where a reminder's time starts: "at 5pm", "in 10 minutes", "tomorrow", "on friday", ...
_WHEN = (
    rf"(?:at \d|at noon|at midnight|in (?:{_AMOUNT}) (?:{_UNIT})\b|tomorrow|tonight|"
    rf"today|this (?:morning|afternoon|evening)|on (?:{_WEEKDAYS})|next (?:{_WEEKDAYS}|week)|every )"
)
_TASK = r"(?:a |an |the )?(?:new )?task(?::\s*|\s+)(?:called |named |titled |to )?"
_NOTE = r"(?:a )?(?:new )?note(?::\s*|\s+)(?:called |named |titled )?"

# (intent, pattern) in order; the first match wins.
_PATTERNS: list[tuple[str, str]] = [
    ("timed_reminder", rf"^remind me to (?P<what>.+?) (?P<when>{_WHEN}.*)$"),
    ("timed_reminder", rf"^remind me (?P<when>{_WHEN}.*?),? to (?P<what>.+)$"),
    ("create_task", r"^remind me to (?P<what>.+)$"),
    ("remember", r"^remember(?: that |:\s*)(?P<what>.+)$"),
    ("list_tasks", r"^(?:what are|show(?: me)?|list) (?:all )?my (?:open )?tasks$"),
    ("list_tasks", r"^what(?:'s| is) on my (?:to-?do )?list$"),
    ("delete_task", rf"^(?:delete|remove) {_TASK}(?P<what>.+)$"),
    ("create_note", rf"^(?:create|make|add|write) {_NOTE}(?P<what>.+)$"),
    ("create_task", rf"^(?:add|create) {_TASK}(?P<what>.+)$"),
    ("create_task", r"^add (?P<what>.+?) to my (?:tasks|task list|to-?do list|list)$"),
]
_COMPILED = [(intent, re.compile(pattern, re.IGNORECASE)) for intent, pattern in _PATTERNS]

# The tool each request starts with.
_FIRST_TOOL = {
    "create_task": "create_task",
    "remember": "remember",
    "list_tasks": "list_tasks",
    "delete_task": "search_tasks",
    "create_note": "create_note",
}


@dataclass(frozen=True)
class DemoRequest:
    intent: str
    what: str = ""
    when: str = ""


def parse_request(text: str) -> DemoRequest | None:
    cleaned = re.sub(r"^(?:please|hey|ok|okay),? ", "", text.strip(), flags=re.IGNORECASE)
    cleaned = re.sub(r"(?:,? please)?[\s.!?]*$", "", cleaned, flags=re.IGNORECASE)
    cleaned = re.sub(r"\s+", " ", cleaned)
    for intent, pattern in _COMPILED:
        match = pattern.match(cleaned)
        if match is not None:
            groups = match.groupdict()
            return DemoRequest(
                intent=intent,
                what=_unquote(groups.get("what") or ""),
                when=groups.get("when") or "",
            )
    return None


def _unquote(text: str) -> str:
    return text.strip().strip("\"'“”‘’«»").strip()


def _capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]


@dataclass
class _Done:
    """One tool call made earlier in this turn and what came back."""

    call: ToolCall | None
    data: Any
    error: str | None

    @property
    def tool(self) -> str:
        return self.call.name if self.call else ""


class DemoProvider:
    name = "demo"
    is_demo = True

    async def stream(
        self,
        *,
        messages: list[ChatMessage],
        tools: list[dict[str, Any]],
        max_tokens: int,
        tool_choice: Literal["auto", "none"] = "auto",
    ) -> AsyncIterator[ProviderEvent]:
        for event in self.step(messages=messages, tools=tools, tool_choice=tool_choice):
            yield event
            await asyncio.sleep(0)  # let the consumer send each delta as it comes

    async def aclose(self) -> None:
        return None

    def step(
        self,
        *,
        messages: list[ChatMessage],
        tools: list[dict[str, Any]],
        tool_choice: Literal["auto", "none"] = "auto",
    ) -> list[ProviderEvent]:
        said, done = _current_turn(messages)
        usable = {spec["name"] for spec in tools} if tool_choice == "auto" else set()
        call_number = 1 + sum(len(message.tool_calls) for message in messages)
        request = parse_request(said)
        if request is None:
            return _say(HELP)
        clock = owner_clock(messages)
        if not done:
            return self._begin(request, usable, call_number, clock)
        return self._continue(request, done, usable, call_number, clock)

    def _begin(
        self, request: DemoRequest, usable: set[str], number: int, clock: dt.datetime | None
    ) -> list[ProviderEvent]:
        if request.intent == "timed_reminder":
            return _timed_reminder(request, usable, number, clock)
        tool = _FIRST_TOOL[request.intent]
        if tool not in usable:
            return _say(f"I can't use the {tool} tool right now, so I couldn't do that.")
        arguments: dict[str, Any] = {
            "create_task": {"title": _capitalised(request.what)},
            "remember": {"text": _capitalised(request.what)},
            "list_tasks": {"status": "open"},
            "search_tasks": {"query": request.what},
            "create_note": _note_arguments(request.what),
        }[tool]
        return _call(_tool_call(number, tool, arguments))

    def _continue(
        self,
        request: DemoRequest,
        done: list[_Done],
        usable: set[str],
        number: int,
        clock: dt.datetime | None,
    ) -> list[ProviderEvent]:
        last = done[-1]
        if last.error is not None:
            return _say(f"That didn't work: {last.error}")
        arguments = (last.call.arguments if last.call else None) or {}
        data = last.data if isinstance(last.data, dict) else {}
        if last.tool == "create_task":
            return _say(
                f"Added the task “{_field(data, 'task', 'title') or arguments.get('title')}”."
            )
        if last.tool == "remember":
            fact = _field(data, "memory", "text") or arguments.get("text")
            return _say(f"Got it. I'll remember that: {fact}")
        if last.tool == "create_note":
            return _say(
                f"Created the note “{_field(data, 'note', 'title') or arguments.get('title')}”."
            )
        if last.tool == "create_automation":
            return _say(_reminder_set(request.what, data, arguments, clock))
        if last.tool == "list_tasks":
            return _say(_task_list(_items(last.data), data.get("total")))
        if last.tool == "search_tasks" and request.intent == "delete_task":
            return self._delete_found(request, _items(last.data), usable, number)
        if last.tool == "delete_task":
            return _say(_deleted(data, _title_of(done, arguments.get("task_id"))))
        return _say("Done.")

    def _delete_found(
        self, request: DemoRequest, matches: list[dict[str, Any]], usable: set[str], number: int
    ) -> list[ProviderEvent]:
        if not matches:
            return _say(f"I couldn't find a task matching “{request.what}”.")
        if len(matches) > 1:
            lines = "\n".join(f"- {task.get('title')} (#{task.get('id')})" for task in matches)
            return _say(
                f"Several tasks match “{request.what}”:\n{lines}\n"
                "Which one should I delete? Use more of its title."
            )
        task = matches[0]
        if "delete_task" not in usable:
            return _say(f"I found “{task.get('title')}”, but deleting tasks isn't available here.")
        return _call(_tool_call(number, "delete_task", {"task_id": task.get("id")}))


# --- reminders at a time ----------------------------------------------------------------------

# agent/prompt.py, local_time_line: "Thursday 15 January 2026, 14:30 (Europe/Paris, UTC+01:00)".
_CLOCK = re.compile(
    r"The owner's local time: \w+ (?P<date>\d{1,2} \w+ \d{4}), (?P<time>\d{1,2}:\d{2}) "
    r"\((?P<zone>[^,()]+), UTC(?P<offset>[+-]\d{2}:\d{2})?\)"
)
_DAY = rf"today|tonight|tomorrow|on (?:{_WEEKDAYS})"
_AT = re.compile(
    rf"^(?:(?P<day_before>{_DAY}),? )?(?:at )?"
    r"(?:(?P<word>noon|midnight)|(?P<hour>\d{1,2})(?:[:.](?P<minute>\d{2}))?"
    r"(?: ?(?P<half>[ap])\.?m\.?)?(?: o'?clock)?)"
    rf"(?: (?P<day_after>{_DAY}))?$"
)
_DURATION = re.compile(
    rf"^in (?P<n1>{_AMOUNT}) (?P<u1>{_UNIT})(?:,? (?:and )?(?P<n2>{_AMOUNT}) (?P<u2>{_UNIT}))?$"
)
_MAX_AHEAD = dt.timedelta(days=366)
_NAME_CHARS = 200  # automations.services MAX_NAME / MAX_MESSAGE (providers cannot import it)
_MESSAGE_CHARS = 4_000
_EXAMPLES = "“in 20 minutes”, “at 17:30” or “tomorrow at 9am”"


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
        ahead = (_WEEKDAYS.split("|").index(day[3:]) - today.weekday()) % 7
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


def timed_reminder_call(request: DemoRequest, now: dt.datetime, number: int) -> ToolCall:
    """The create_automation call for "remind me to X at/in/tomorrow ...": a one-time reminder
    at ``request.when`` counted from ``now`` (the owner's local time). Raises NoTime."""
    at = reminder_time(request.when, now)
    what = _capitalised(request.what)
    name = what if len(what) <= _NAME_CHARS else what[: _NAME_CHARS - 1] + "…"
    arguments = {
        "name": name,
        "kind": "reminder",
        # A reminder shows its name; the whole text only when the name had to be cut.
        "message": "" if name == what else what[:_MESSAGE_CHARS],
        "schedule": {"type": "once", "at": at.isoformat(timespec="seconds")},
    }
    return _tool_call(number, "create_automation", arguments)


def _timed_reminder(
    request: DemoRequest, usable: set[str], number: int, clock: dt.datetime | None
) -> list[ProviderEvent]:
    what = request.what
    if "create_automation" not in usable:
        return _say(
            f"I can't schedule reminders here, so I haven't set “{what}” {request.when}. Say "
            f"“remind me to {what}” without a time and I'll add it as a task."
        )
    if clock is None:
        return _say(f"I don't know your local time, so I haven't set “{what}” {request.when}.")
    try:
        return _call(timed_reminder_call(request, clock, number))
    except NoTime as exc:
        return _say(f"{exc} So I haven't set the reminder “{what}”. Say the time like {_EXAMPLES}.")


def _reminder_set(
    what: str, data: dict[str, Any], arguments: dict[str, Any], clock: dt.datetime | None
) -> str:
    schedule = arguments.get("schedule")
    when = _field(data, "automation", "next_run_at") or (
        schedule.get("at") if isinstance(schedule, dict) else None
    )
    try:
        at = dt.datetime.fromisoformat(str(when))
    except ValueError:
        return f"I'll remind you to {what}."
    return f"I'll remind you to {what} {_spoken(at, clock)}."


def _spoken(at: dt.datetime, clock: dt.datetime | None) -> str:
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


def _current_turn(messages: list[ChatMessage]) -> tuple[str, list[_Done]]:
    """The owner's last message and the tool results that followed it, oldest first."""
    start = max((i for i, m in enumerate(messages) if m.role == "user"), default=-1)
    if start < 0:
        return "", []
    calls: dict[str, ToolCall] = {}
    done = []
    for message in messages[start + 1 :]:
        for call in message.tool_calls:
            calls[call.id] = call
        if message.role == "tool":
            data, error = _result(message.content)
            done.append(_Done(call=calls.get(message.tool_call_id), data=data, error=error))
    return messages[start].content, done


def _result(content: str) -> tuple[Any, str | None]:
    """A tool message's result, or the error it reports."""
    try:
        data = json.loads(content)
    except ValueError:
        if content.lower().startswith("error"):
            return None, content
        return {"text": content}, None
    if isinstance(data, dict):
        problem = data.get("error")
        if problem:
            message = (
                problem.get("message") or problem.get("code")
                if isinstance(problem, dict)
                else problem
            )
            return None, str(message)
        if data.get("ok") is False:
            return None, str(data.get("message") or "the tool failed")
    return data, None


def _field(data: dict[str, Any], nested: str, key: str) -> Any:
    inner = data.get(nested)
    return (inner.get(key) if isinstance(inner, dict) else None) or data.get(key)


def _items(data: Any) -> list[dict[str, Any]]:
    if isinstance(data, dict):
        for key in ("tasks", "items", "results", "matches"):
            if isinstance(data.get(key), list):
                data = data[key]
                break
        else:
            data = next((value for value in data.values() if isinstance(value, list)), [])
    return [item for item in data if isinstance(item, dict)] if isinstance(data, list) else []


def _task_list(tasks: list[dict[str, Any]], total: Any) -> str:
    if not tasks:
        return "You have no open tasks."
    lines = "\n".join(f"- {task.get('title')}" for task in tasks)
    if isinstance(total, int) and total > len(tasks):
        return f"You have {total} open tasks; here are the first {len(tasks)}:\n{lines}"
    if len(tasks) == 1:
        return f"You have 1 open task:\n{lines}"
    return f"You have {len(tasks)} open tasks:\n{lines}"


def _title_of(done: list[_Done], task_id: Any) -> str:
    for earlier in done:
        for task in _items(earlier.data):
            if task.get("id") == task_id:
                return str(task.get("title"))
    return f"#{task_id}"


def _deleted(data: dict[str, Any], title: str) -> str:
    # A destructive tool only proposes; the owner approves it on the approval card.
    if "action_id" in data or data.get("status") in ("awaiting_owner_approval", "pending"):
        return f"I've asked for your approval to delete the task “{title}”."
    return f"Deleted the task “{title}”."


def _note_arguments(what: str) -> dict[str, str]:
    title, _, content = what.partition(":")
    return {"title": _capitalised(title.strip())} | (
        {"content": content.strip()} if content.strip() else {}
    )


def _tool_call(number: int, name: str, arguments: dict[str, Any]) -> ToolCall:
    return ToolCall(
        id=f"demo_{number}", name=name, arguments=arguments, raw_arguments=json.dumps(arguments)
    )


def _call(call: ToolCall) -> list[ProviderEvent]:
    return [call, Finish("tool_calls")]


def _say(text: str) -> list[ProviderEvent]:
    """The text in a few deltas, split between words, as a model would stream it."""
    words = text.split(" ")
    size = max(1, -(-len(words) // 3))
    pieces = [" ".join(words[i : i + size]) for i in range(0, len(words), size)]
    deltas = [
        TextDelta(piece + (" " if i < len(pieces) - 1 else "")) for i, piece in enumerate(pieces)
    ]
    return [*deltas, Finish("stop")]
