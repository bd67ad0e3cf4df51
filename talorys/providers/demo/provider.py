"""The demo provider's dispatcher: it reads the turn (turn.py), asks parse.py which request the
owner made, and hands each step to the module that understands that kind of request."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import AsyncIterator
from typing import Any

from talorys.providers.base import ChatMessage, ProviderEvent, ToolChoice
from talorys.providers.demo.dates import task_added, task_step
from talorys.providers.demo.events import call, say, tool_call
from talorys.providers.demo.facts import fact_memory, remembered
from talorys.providers.demo.files import answer_from_files, attached_section
from talorys.providers.demo.parse import HELP, DemoRequest, parse_request
from talorys.providers.demo.reminders import reminder_set, timed_reminder
from talorys.providers.demo.times import owner_clock
from talorys.providers.demo.turn import Done, current_turn, field, items
from talorys.providers.demo.workspace import (
    by_number,
    completed,
    deleted,
    found,
    note_arguments,
    task_list,
    title_of,
)

# The tool each request starts with.
_FIRST_TOOL = {
    "create_task": "create_task",
    "remember": "remember",
    "tell_fact": "remember",
    "list_tasks": "list_tasks",
    "delete_task": "search_tasks",
    "complete_task": "search_tasks",
    "create_note": "create_note",
}


class DemoProvider:
    name = "demo"
    is_demo = True

    async def stream(
        self,
        *,
        messages: list[ChatMessage],
        tools: list[dict[str, Any]],
        max_tokens: int,
        tool_choice: ToolChoice = "auto",
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
        tool_choice: ToolChoice = "auto",
    ) -> list[ProviderEvent]:
        said, done = current_turn(messages)
        usable = {spec["name"] for spec in tools} if tool_choice == "auto" else set()
        call_number = 1 + sum(len(message.tool_calls) for message in messages)
        request = parse_request(said)
        if request is None:
            attached = attached_section(messages)
            return say(answer_from_files(said, attached) if attached else HELP)
        clock = owner_clock(messages)
        if not done:
            return _begin(request, usable, call_number, clock)
        return _continue(request, done, usable, call_number, clock)


def _begin(
    request: DemoRequest, usable: set[str], number: int, clock: dt.datetime | None
) -> list[ProviderEvent]:
    """The first step of a request: the tool call it starts with."""
    if request.intent == "timed_reminder":
        return timed_reminder(request, usable, number, clock)
    if request.intent == "create_task":
        return task_step(request.what, usable, number, clock)
    numbered = by_number(request, usable, number)
    if numbered is not None:
        return numbered
    tool = _FIRST_TOOL[request.intent]
    if tool not in usable:
        return say(f"I can't use the {tool} tool right now, so I couldn't do that.")
    arguments: dict[str, Any] = {
        # "remember that ..." and a fact told outright are filed alike (facts.py).
        "remember": dict(zip(("text", "category"), fact_memory(request.what), strict=True)),
        "list_tasks": {"status": "open"},
        "search_tasks": {"query": request.what},
        "create_note": note_arguments(request.what),
    }[tool]
    return call(tool_call(number, tool, arguments))


def _continue(
    request: DemoRequest,
    done: list[Done],
    usable: set[str],
    number: int,
    clock: dt.datetime | None,
) -> list[ProviderEvent]:
    """A later step: answer from the last tool's result, or make the next call."""
    last = done[-1]
    if last.error is not None:
        return say(f"That didn't work: {last.error}")
    arguments = (last.call.arguments if last.call else None) or {}
    data = last.data if isinstance(last.data, dict) else {}
    if last.tool == "create_task":
        return say(task_added(data, arguments, clock))
    if last.tool == "remember":
        return say(remembered(data, arguments))
    if last.tool == "create_note":
        return say(f"Created the note “{field(data, 'note', 'title') or arguments.get('title')}”.")
    if last.tool == "create_automation":
        return say(reminder_set(request.what, data, arguments, clock))
    if last.tool == "list_tasks":
        return say(task_list(items(last.data), data.get("total")))
    if last.tool == "search_tasks" and request.intent in ("delete_task", "complete_task"):
        return found(request, items(last.data), usable, number)
    if last.tool == "delete_task":
        return say(deleted(data, title_of(done, arguments.get("task_id"))))
    if last.tool == "complete_task":
        return say(completed(data, title_of(done, arguments.get("task_id"))))
    return say("Done.")
