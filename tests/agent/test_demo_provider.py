"""The demo provider: plain requests become real tool calls, tool results become answers.

It only streams events; the runner and executor run the tools, so these tests feed it the
tool results a turn would contain.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent.providers import provider_for
from agent.providers.base import ChatMessage, Finish, ProviderConfig, TextDelta, ToolCall
from agent.providers.demo import DemoProvider

TOOL_NAMES = [
    "create_task",
    "list_tasks",
    "search_tasks",
    "remember",
    "create_note",
    "delete_task",
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
    assert calls(first) == [("remember", {"text": "My sister is called Ana"})]

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
        (
            [{"id": 7, "title": "Buy milk"}, {"id": 8, "title": "Buy milk powder"}],
            "Several tasks match “buy milk”:\n- Buy milk (#7)\n- Buy milk powder (#8)\n"
            "Which one should I delete? Use more of its title.",
        ),
    ],
)
async def test_delete_never_guesses(matches, answer):
    messages = owner("delete the task buy milk")
    search = await step(messages)

    events = await step(after(messages, search, {"tasks": matches}))

    assert calls(events) == []
    assert said(events) == answer


async def test_delete_without_the_delete_tool_says_so():
    messages = owner("delete the task buy milk")
    tools = [spec for spec in TOOLS if spec["name"] != "delete_task"]
    search = await step(messages, tools)

    events = await step(after(messages, search, {"tasks": [{"id": 7, "title": "Buy milk"}]}), tools)

    assert calls(events) == []
    assert said(events) == "I found “Buy milk”, but deleting tasks isn't available here."


async def test_a_timed_reminder_is_not_silently_turned_into_a_task():
    events = await step(owner("remind me to call mom at 5pm"))

    assert calls(events) == []
    assert "can't schedule reminders" in said(events)
    assert "“call mom”" in said(events)


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
