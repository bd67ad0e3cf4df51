"""The demo provider reads dates and repeating phrases with quick add's reader
(talorys/providers/demo/dates.py, talorys/lib/when.py): the calls it makes and what it says.
The same requests through the real tools: test_demo_dates.py."""

from __future__ import annotations

import pytest

from tests.agent.test_demo_provider import TOOLS, after, calls, owner, owner_at, said, step


async def test_add_with_a_date_is_a_task_due_then():
    messages = owner_at("add buy milk tomorrow 9am")
    events = await step(messages)
    assert calls(events) == [
        ("create_task", {"title": "Buy milk", "due_at": "2026-01-16T09:00:00+01:00"})
    ]
    result = {"task": {"id": 3, "title": "Buy milk", "due_at": "2026-01-16T09:00:00+01:00"}}
    answer = await step(after(messages, events, result))
    assert said(answer) == "Added the task “Buy milk”, due Fri 16 Jan, 09:00."


async def test_words_that_only_look_like_dates_stay_in_the_task():
    events = await step(owner_at("add I may call Sam"))
    assert calls(events) == [("create_task", {"title": "I may call Sam"})]


async def test_without_the_owners_clock_nothing_is_read_as_a_date():
    events = await step(owner("add buy milk tomorrow 9am"))
    assert calls(events) == [("create_task", {"title": "Buy milk tomorrow 9am"})]


@pytest.mark.parametrize(
    ("text", "name", "schedule", "answer"),
    [
        (
            "remind me every monday to water plants",
            "Water plants",
            {"type": "weekly", "days": ["mon"], "time": "09:00"},
            "I'll remind you to water plants every Monday at 09:00",
        ),
        (
            "remind me to call mom every day at 9",
            "Call mom",
            {"type": "daily", "time": "09:00"},
            "I'll remind you to call mom every day at 09:00",
        ),
    ],
)
async def test_a_repeating_phrase_is_a_reminder_routine(text, name, schedule, answer):
    messages = owner_at(text)
    events = await step(messages)
    assert calls(events) == [
        (
            "create_automation",
            {"name": name, "kind": "reminder", "message": "", "schedule": schedule},
        )
    ]
    if answer is not None:
        reply = await step(after(messages, events, {"automation": {"id": 4, "name": name}}))
        assert said(reply).startswith(answer + ": a reminder routine")


async def test_adding_a_repeating_phrase_is_a_repeating_task():
    events = await step(owner_at("add pay rent every month on the 1st"))
    repeat = {"type": "monthly", "day": 1, "time": "09:00"}
    assert calls(events) == [("create_task", {"title": "Pay rent", "repeat": repeat})]


async def test_a_repeating_task_needs_no_automation_tool():
    tools = [spec for spec in TOOLS if spec["name"] != "create_automation"]
    events = await step(owner_at("add water plants every monday"), tools)
    repeat = {"type": "weekly", "days": ["mon"], "time": "09:00"}
    assert calls(events) == [("create_task", {"title": "Water plants", "repeat": repeat})]


async def test_words_that_are_only_a_date_ask_what_to_add():
    events = await step(owner_at("add tomorrow 9am"))
    assert calls(events) == []
    assert said(events) == (
        "“tomorrow 9am” is only a date: what should I add? Say it like “add call Ana tomorrow 9am”."
    )


@pytest.mark.parametrize(
    "text",
    [
        "remind me to call Ana next Tuesday at 6pm",
        "remind me to call Ana on Tuesday at 6pm",
        "remind me to call Ana tuesday at 6pm",  # was "Call Ana tuesday", today at 18:00
        "remind me next tue at 6pm to call Ana",
        "Next Tuesday at 6pm, remind me to call Ana",  # was not understood at all
    ],
)
async def test_a_reminder_on_a_weekday_reads_it_as_quick_add_does(text):
    # Thursday 15 January 2026: Tuesday is the 20th.
    events = await step(owner_at(text))
    assert calls(events) == [
        (
            "create_automation",
            {
                "name": "Call Ana",
                "kind": "reminder",
                "message": "",
                "schedule": {"type": "once", "at": "2026-01-20T18:00:00+01:00"},
            },
        )
    ]
