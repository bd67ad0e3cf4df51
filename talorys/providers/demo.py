"""The demo provider: no model server, deterministic, and labelled as demo.

It understands a few plain requests and acts on them the way a model would, by calling the
registered tools (the runner and executor run them for real), then answers from the tool
results. Everything else gets a short note saying what it understands.

Each step reads only ``messages``: the owner's last message says what to do, and the tool
messages after it say what has been done so far in this turn. What it understands is
demo_requests.py; how it reads and says a reminder's time is demo_times.py.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Literal

from talorys.providers.base import ChatMessage, Finish, ProviderEvent, TextDelta, ToolCall
from talorys.providers.demo_facts import fact_memory
from talorys.providers.demo_requests import (
    HELP,
    DemoRequest,
    capitalised,
    parse_request,
)
from talorys.providers.demo_times import NoTime, owner_clock, reminder_time, spoken

# The tool each request starts with.
_FIRST_TOOL = {
    "create_task": "create_task",
    "remember": "remember",
    "tell_fact": "remember",
    "list_tasks": "list_tasks",
    "delete_task": "search_tasks",
    "create_note": "create_note",
}


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
            "create_task": {"title": capitalised(request.what)},
            # "remember that ..." and a fact told outright are filed alike (demo_facts.py).
            "remember": dict(zip(("text", "category"), fact_memory(request.what), strict=True)),
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
            if isinstance(data.get("already_known"), dict):
                return _say(f"I already knew that: {data['already_known'].get('text')}")
            if isinstance(data.get("superseded"), dict):
                old = data["superseded"].get("text")
                return _say(f"Got it: {fact}. That replaces what I had before ({old}).")
            if isinstance(data.get("contradicts"), dict):
                old = data["contradicts"].get("text")
                return _say(
                    f"I've noted: {fact}. But I also remember “{old}”, which says otherwise. "
                    "Which one is right?"
                )
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

# Automation.NAME_MAX / MESSAGE_MAX (automations/models.py): the provider layer cannot import it.
_NAME_CHARS = 200
_MESSAGE_CHARS = 4_000
_EXAMPLES = "“in 20 minutes”, “at 17:30” or “tomorrow at 9am”"


def timed_reminder_call(request: DemoRequest, now: dt.datetime, number: int) -> ToolCall:
    """The create_automation call for "remind me to X at/in/tomorrow ...": a one-time reminder
    at ``request.when`` counted from ``now`` (the owner's local time). Raises NoTime."""
    at = reminder_time(request.when, now)
    what = capitalised(request.what)
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
    return f"I'll remind you to {what} {spoken(at, clock)}."


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
    return {"title": capitalised(title.strip())} | (
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
