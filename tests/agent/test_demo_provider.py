"""The demo provider: plain requests become real tool calls, tool results become answers.

It only streams events; the runner and executor run the tools, so these tests feed it the
tool results a turn would contain.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from agent.prompt import system_prompt
from talorys.providers import provider_for
from talorys.providers.base import ChatMessage, Finish, ProviderConfig, TextDelta, ToolCall
from talorys.providers.demo import DemoProvider

TOOL_NAMES = [
    "create_task",
    "list_tasks",
    "search_tasks",
    "remember",
    "create_note",
    "delete_task",
    "create_automation",
]
TOOLS = [
    {"name": name, "description": name, "parameters": {"type": "object"}} for name in TOOL_NAMES
]


async def step(
    messages: list[ChatMessage], tools: list[dict[str, Any]] = TOOLS, **kwargs: Any
) -> list[Any]:
    provider = provider_for(ProviderConfig())  # nothing configured: the demo
    return [
        event
        async for event in provider.stream(messages=messages, tools=tools, max_tokens=200, **kwargs)
    ]


def said(events: list[Any]) -> str:
    return "".join(event.text for event in events if isinstance(event, TextDelta))


def calls(events: list[Any]) -> list[tuple[str, dict[str, Any] | None]]:
    return [(event.name, event.arguments) for event in events if isinstance(event, ToolCall)]


def owner(text: str) -> list[ChatMessage]:
    return [ChatMessage(role="system", content="policy"), ChatMessage(role="user", content=text)]


def after(messages: list[ChatMessage], events: list[Any], result: Any) -> list[ChatMessage]:
    """The turn so far plus the executor's answer to the tool call in ``events``."""
    (call,) = [event for event in events if isinstance(event, ToolCall)]
    content = result if isinstance(result, str) else json.dumps(result)
    return [
        *messages,
        ChatMessage(role="assistant", tool_calls=[call]),
        ChatMessage(role="tool", content=content, tool_call_id=call.id, name=call.name),
    ]


def test_it_is_the_demo_provider_when_nothing_is_configured():
    provider = provider_for(ProviderConfig(base_url="", model=""))
    assert isinstance(provider, DemoProvider)
    assert (provider.name, provider.is_demo) == ("demo", True)


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("add a task to buy milk", "Buy milk"),
        ("Please add a task to buy milk.", "Buy milk"),
        ("add task call the bank", "Call the bank"),
        ("Add task: “Renew passport”", "Renew passport"),
        ("create a task called File taxes", "File taxes"),
        ("remind me to water the plants", "Water the plants"),
        ("remind me to check in on Bob", "Check in on Bob"),  # "in on" is not a time
        ("add oat milk to my list", "Oat milk"),
        ("remind me to put the cake in a box", "Put the cake in a box"),  # not "in a minute"
    ],
)
async def test_adding_a_task_calls_create_task(text, title):
    events = await step(owner(text))

    assert calls(events) == [("create_task", {"title": title})]
    assert events[-1] == Finish("tool_calls")
    assert said(events) == ""


async def test_the_answer_summarises_the_created_task():
    messages = owner("add a task to buy milk")
    first = await step(messages)

    created = {"ok": True, "task": {"id": 3, "title": "Buy milk", "status": "open"}}
    events = await step(after(messages, first, created))

    assert said(events) == "Added the task “Buy milk”."
    assert len([event for event in events if isinstance(event, TextDelta)]) > 1  # streamed
    assert calls(events) == []
    assert events[-1] == Finish("stop")


async def test_a_tool_error_is_reported():
    messages = owner("add a task to buy milk")
    first = await step(messages)
    failure = {"ok": False, "error": {"code": "VALIDATION", "message": "title: too long"}}

    events = await step(after(messages, first, failure))

    assert said(events) == "That didn't work: title: too long"


async def test_remember_that():
    messages = owner("Remember that my sister is called Ana")
    first = await step(messages)
    assert calls(first) == [("remember", {"text": "Sister is called Ana", "category": "person"})]

    remembered = {"ok": True, "memory": {"id": 1, "text": "My sister is called Ana"}}
    events = await step(after(messages, first, remembered))

    assert said(events) == "Got it. I'll remember that: My sister is called Ana"


@pytest.mark.parametrize("text", ["What are my open tasks?", "list my tasks", "show me my tasks"])
async def test_open_tasks_are_listed(text):
    messages = owner(text)
    first = await step(messages)
    assert calls(first) == [("list_tasks", {"status": "open"})]
    tasks = [{"id": 1, "title": "Buy milk"}, {"id": 2, "title": "Call Ana"}]

    listed = await step(after(messages, first, {"ok": True, "tasks": tasks, "total": 2}))
    first_page = await step(after(messages, first, {"ok": True, "tasks": tasks, "total": 30}))
    empty = await step(after(messages, first, {"ok": True, "tasks": [], "total": 0}))

    assert said(listed) == "You have 2 open tasks:\n- Buy milk\n- Call Ana"
    assert (
        said(first_page) == "You have 30 open tasks; here are the first 2:\n- Buy milk\n- Call Ana"
    )
    assert said(empty) == "You have no open tasks."


async def test_create_a_note_with_content():
    messages = owner("create a note Groceries: eggs, bread")
    first = await step(messages)
    assert calls(first) == [("create_note", {"title": "Groceries", "content": "eggs, bread"})]

    events = await step(
        after(messages, first, {"ok": True, "note": {"id": 5, "title": "Groceries"}})
    )

    assert said(events) == "Created the note “Groceries”."


async def test_delete_searches_then_deletes_the_single_match():
    messages = owner("delete the task buy milk")
    search = await step(messages)
    assert calls(search) == [("search_tasks", {"query": "buy milk"})]
    messages = after(messages, search, {"tasks": [{"id": 7, "title": "Buy milk"}]})

    delete = await step(messages)
    assert calls(delete) == [("delete_task", {"task_id": 7})]
    assert delete[0].id != search[0].id

    proposed = {"ok": True, "status": "awaiting_owner_approval", "action_id": 12}
    events = await step(after(messages, delete, proposed))
    assert said(events) == "I've asked for your approval to delete the task “Buy milk”."


@pytest.mark.parametrize(
    ("matches", "answer"),
    [
        ([], "I couldn't find a task matching “buy milk”."),
        # Weak neighbours a ranked search returns are no candidates.
        ([{"id": 9, "title": "Call the dairy"}], "I couldn't find a task matching “buy milk”."),
        (
            [
                {"id": 7, "title": "Buy milk powder"},
                {"id": 8, "title": "Buy oat milk"},
                {"id": 9, "title": "Call the dairy"},
            ],
            "Several tasks match “buy milk”:\n- Buy milk powder (#7)\n- Buy oat milk (#8)\n\n"
            "Which one should I delete? Use more of its title.",
        ),
        (
            [{"id": 7, "title": "Buy milk"}, {"id": 8, "title": "buy milk."}],
            "Several tasks match “buy milk”:\n- Buy milk (#7)\n- buy milk. (#8)\n\n"
            "Which one should I delete? Use more of its title, or its number "
            "(“delete the task #7”).",
        ),
    ],
)
async def test_delete_never_guesses(matches, answer):
    messages = owner("delete the task buy milk")
    search = await step(messages)

    events = await step(after(messages, search, {"tasks": matches}))

    assert calls(events) == []
    assert said(events) == answer


@pytest.mark.parametrize(
    ("text", "matches", "task_id"),
    [
        # An exact title wins over the others that contain its words.
        ("delete the task buy milk", [(8, "Buy milk powder"), (7, "Buy milk")], 7),
        (
            "delete the task Book the dentist.",
            [(8, "Call the dentist"), (7, "book the dentist")],
            7,
        ),
        # Then a title of the very same words, then the one real candidate.
        ("delete the task buy milk", [(8, "Buy milk powder"), (7, "Buy the milk")], 7),
        ("delete the task dentist", [(7, "Book the dentist"), (8, "Call the bank")], 7),
    ],
)
async def test_delete_takes_the_exact_title_or_the_one_clear_match(text, matches, task_id):
    messages = owner(text)
    search = await step(messages)
    tasks = [{"id": pk, "title": title} for pk, title in matches]

    events = await step(after(messages, search, {"tasks": tasks}))

    assert calls(events) == [("delete_task", {"task_id": task_id})]


async def test_delete_without_the_delete_tool_says_so():
    messages = owner("delete the task buy milk")
    tools = [spec for spec in TOOLS if spec["name"] != "delete_task"]
    search = await step(messages, tools)

    events = await step(after(messages, search, {"tasks": [{"id": 7, "title": "Buy milk"}]}), tools)

    assert calls(events) == []
    assert said(events) == "I found “Buy milk”, but deleting tasks isn't available here."


async def test_unknown_requests_get_the_demo_help():
    events = await step(owner("What's the capital of France?"))

    assert calls(events) == []
    assert "demo" in said(events)
    assert "add a task to" in said(events)
    assert events[-1] == Finish("stop")


async def test_tools_are_only_called_when_offered():
    no_tools = await step(owner("add a task to buy milk"), tools=[])
    text_only = await step(owner("add a task to buy milk"), tool_choice="none")

    assert calls(no_tools) == calls(text_only) == []
    assert "create_task" in said(no_tools)


async def test_it_is_deterministic():
    first = await step(owner("add a task to buy milk"))
    second = await step(owner("add a task to buy milk"))
    assert first == second


# --- reminders at a time -----------------------------------------------------------------------

PARIS = ZoneInfo("Europe/Paris")
THURSDAY = dt.datetime(2026, 1, 15, 14, 30, tzinfo=PARIS)  # 14:30 in Paris, UTC+01:00


def owner_at(text: str, now: dt.datetime = THURSDAY) -> list[ChatMessage]:
    """The owner's message under the real system prompt, which states their local time."""
    prompt = system_prompt(now=now, time_zone=now.tzinfo.key, memories=[])
    return [ChatMessage(role="system", content=prompt), ChatMessage(role="user", content=text)]


def reminder(name: str, at: str, message: str = "") -> tuple[str, dict[str, Any]]:
    return (
        "create_automation",
        {
            "name": name,
            "kind": "reminder",
            "message": message,
            "schedule": {"type": "once", "at": at},
        },
    )


@pytest.mark.parametrize(
    ("text", "at"),
    [
        ("Remind me to call Sam in 2 minutes.", "2026-01-15T14:32:00+01:00"),
        ("remind me to call Sam in 1 hour and 30 minutes", "2026-01-15T16:00:00+01:00"),
        ("remind me to call Sam in 2 days", "2026-01-17T09:00:00+01:00"),  # a day: at 09:00
        ("remind me to call Sam tomorrow", "2026-01-16T09:00:00+01:00"),
        ("remind me in 10 minutes to call Sam", "2026-01-15T14:40:00+01:00"),
        ("remind me to call Sam at 5pm", "2026-01-15T17:00:00+01:00"),
        ("remind me to call Sam at 17:30", "2026-01-15T17:30:00+01:00"),
        ("remind me to call Sam at 5", "2026-01-16T05:00:00+01:00"),  # as quick add reads it
        ("remind me to call Sam at 9am", "2026-01-16T09:00:00+01:00"),  # passed today
        ("remind me to call Sam at 14:30", "2026-01-16T14:30:00+01:00"),  # this very minute
        ("remind me to call Sam at 9am tomorrow", "2026-01-16T09:00:00+01:00"),
        ("Remind me to call Sam tomorrow at 9", "2026-01-16T09:00:00+01:00"),
        ("remind me to call Sam tonight at 9", "2026-01-15T21:00:00+01:00"),
        ("remind me to call Sam at midnight", "2026-01-16T00:00:00+01:00"),
        ("remind me to call Sam on monday at noon", "2026-01-19T12:00:00+01:00"),
        ("remind me to call Sam at 9 a.m. tomorrow", "2026-01-16T09:00:00+01:00"),
    ],
)
async def test_a_reminder_at_a_time_is_a_one_time_automation_in_the_owner_time(text, at):
    events = await step(owner_at(text))

    assert calls(events) == [reminder("Call Sam", at)]
    assert events[-1] == Finish("tool_calls")
    assert said(events) == ""


@pytest.mark.parametrize(
    ("now", "text", "at"),
    [
        # Spring forward in Paris (02:00 -> 03:00): two hours later is 04:30 summer time...
        (
            dt.datetime(2026, 3, 29, 1, 30, tzinfo=PARIS),
            "remind me to call Sam in 2 hours",
            "2026-03-29T04:30:00+02:00",
        ),
        # ...and 02:30, which does not exist that night, is shifted by the gap as schedules are.
        (
            dt.datetime(2026, 3, 28, 20, 0, tzinfo=PARIS),
            "remind me to call Sam tomorrow at 2:30am",
            "2026-03-29T03:30:00+02:00",
        ),
        # The owner's own zone, whatever it is.
        (
            dt.datetime(2026, 7, 1, 8, 0, tzinfo=ZoneInfo("America/New_York")),
            "remind me to call Sam at 9am",
            "2026-07-01T09:00:00-04:00",
        ),
    ],
)
async def test_reminder_times_follow_the_owner_time_zone_and_dst(now, text, at):
    events = await step(owner_at(text, now))

    assert calls(events) == [reminder("Call Sam", at)]


async def test_a_long_reminder_keeps_its_whole_text_in_the_message():
    what = "read " + "very " * 60 + "carefully"
    events = await step(owner_at(f"remind me to {what} in 5 minutes"))

    ((name, arguments),) = calls(events)
    assert len(arguments["name"]) == 200 and arguments["name"].endswith("…")
    assert arguments["message"] == "R" + what[1:]


@pytest.mark.parametrize(
    ("next_run_at", "answer"),
    [
        ("2026-01-15T14:32+01:00", "I'll remind you to call Sam at 14:32."),
        ("2026-01-16T09:00+01:00", "I'll remind you to call Sam tomorrow at 09:00."),
        ("2026-01-19T12:00+01:00", "I'll remind you to call Sam on Monday at 12:00."),
        ("2026-02-02T09:00+01:00", "I'll remind you to call Sam on Monday 02 February at 09:00."),
    ],
)
async def test_the_answer_says_when_the_reminder_comes(next_run_at, answer):
    messages = owner_at("remind me to call Sam in 2 minutes")
    first = await step(messages)
    created = {
        "ok": True,
        "automation": {"id": 4, "name": "Call Sam", "next_run_at": next_run_at, "enabled": True},
    }

    events = await step(after(messages, first, created))

    assert said(events) == answer
    assert calls(events) == []
    assert events[-1] == Finish("stop")


async def test_a_refused_reminder_is_reported():
    messages = owner_at("remind me to call Sam in 2 minutes")
    first = await step(messages)
    refused = {
        "ok": False,
        "error": {"code": "VALIDATION", "message": "schedule.at: that time has passed"},
    }

    events = await step(after(messages, first, refused))

    assert said(events) == "That didn't work: schedule.at: that time has passed"


@pytest.mark.parametrize(
    ("text", "explanation"),
    [
        ("remind me to call mom this evening", "I couldn't read “this evening” as a time."),
        ("remind me to call mom in half an hour", "I couldn't read “in half an hour” as a time."),
        (
            "remind me to call mom today at 9am",
            "That time (Thu 15 Jan, 09:00) has already passed.",
        ),
        ("remind me to call mom at 25:00", "I couldn't read “at 25:00” as a time."),
        ("remind me to call mom at 13pm", "I couldn't read “at 13pm” as a time."),
        ("remind me to call mom in 0 minutes", "That time (Thu 15 Jan, 14:30) has already passed."),
        ("remind me to call mom in 999999 days", "I couldn't read “in 999999 days” as a time."),
    ],
)
async def test_a_time_it_cannot_read_gets_an_explanation_and_no_call(text, explanation):
    events = await step(owner_at(text))

    assert calls(events) == []
    assert said(events) == (
        f"{explanation} So I haven't set the reminder “call mom”. Say the time like "
        "“in 20 minutes”, “at 17:30” or “tomorrow at 9am”."
    )


async def test_a_timed_reminder_is_not_silently_turned_into_a_task():
    tools = [spec for spec in TOOLS if spec["name"] != "create_automation"]
    without_the_tool = await step(owner_at("remind me to call mom at 5pm"), tools)
    without_a_clock = await step(owner("remind me to call mom at 5pm"))

    assert calls(without_the_tool) == calls(without_a_clock) == []
    assert said(without_the_tool) == (
        "I can't schedule reminders here, so I haven't set “call mom” at 5pm. Say “remind me to "
        "call mom” without a time and I'll add it as a task."
    )
    assert said(without_a_clock) == (
        "I don't know your local time, so I haven't set “call mom” at 5pm."
    )
