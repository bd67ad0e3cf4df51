"""The memory tools change memories the way the owner expects, each change leaving a revision
that says the chat made it."""

from __future__ import annotations

from typing import Any

import pytest

from agent.executor import ToolExecutor, ToolOutcome
from memory import services
from memory.models import Memory, MemoryRevision
from talorys.lib.tools import ToolContext
from talorys.providers.base import ToolCall

pytestmark = pytest.mark.django_db


def call(tool: str, /, mode: str = "chat", **arguments: Any) -> ToolOutcome:
    source = "chat" if mode == "chat" else "automation:1"
    executor = ToolExecutor(ctx=ToolContext(mode=mode, source=source), max_tool_calls=12)
    return executor.execute(ToolCall(id="call-1", name=tool, arguments=arguments))


def test_remember_stores_the_memory_with_a_chat_revision():
    outcome = call("remember", text="Prefers tea over coffee", category="preference")

    assert outcome.ok, outcome.result
    memory = Memory.objects.get()
    assert (memory.text, memory.category, memory.source) == (
        "Prefers tea over coffee",
        "preference",
        "chat",
    )
    assert outcome.result["memory"]["id"] == memory.pk
    revision = MemoryRevision.objects.get()
    assert (revision.memory_id, revision.action, revision.source) == (memory.pk, "create", "chat")
    assert revision.text == "Prefers tea over coffee"


def test_correct_memory_replaces_the_text_and_keeps_the_old_one_in_history():
    memory = services.memory_create_unchecked(
        text="Lives in Porto", category="place", source="owner"
    )

    outcome = call("correct_memory", memory_id=memory.pk, text="Lives in Lisbon")

    assert outcome.ok, outcome.result
    memory.refresh_from_db()
    assert (memory.text, memory.category) == ("Lives in Lisbon", "place")
    history = list(
        MemoryRevision.objects.filter(memory=memory)
        .order_by("id")
        .values_list("action", "text", "source")
    )
    assert history == [
        ("create", "Lives in Porto", "owner"),
        ("update", "Lives in Lisbon", "chat"),
    ]


@pytest.mark.parametrize(
    ("tool", "arguments", "code"),
    [
        ("remember", {"text": "  "}, "INVALID_ARGUMENTS"),
        ("remember", {"text": "Likes jazz", "category": "hobby"}, "INVALID_ARGUMENTS"),
        ("correct_memory", {"memory_id": 999, "text": "Lives in Lisbon"}, "NOT_FOUND"),
        ("correct_memory", {"memory_id": "first", "text": "x"}, "INVALID_ARGUMENTS"),
        ("correct_memory", {"text": "Lives in Lisbon"}, "INVALID_ARGUMENTS"),
    ],
)
def test_bad_memory_calls_change_nothing(tool, arguments, code):
    memory = services.memory_create_unchecked(text="Lives in Porto", category="place")
    before = (list(Memory.objects.values()), MemoryRevision.objects.count())

    outcome = call(tool, **arguments)

    assert not outcome.ok
    assert outcome.result["error"]["code"] == code
    assert (list(Memory.objects.values()), MemoryRevision.objects.count()) == before
    memory.refresh_from_db()
    assert memory.text == "Lives in Porto"


def test_list_memories_filters_by_query():
    services.memory_create_unchecked(text="Sister Ana lives in Lisbon", category="person")
    services.memory_create_unchecked(text="Allergic to peanuts")

    everything = call("list_memories").result
    about_ana = call("list_memories", query="ana").result

    assert everything["total"] == 2
    assert [m["text"] for m in about_ana["memories"]] == ["Sister Ana lives in Lisbon"]


def test_scheduled_runs_can_read_memories_but_not_change_them():
    services.memory_create_unchecked(text="Allergic to peanuts")

    listed = call("list_memories", mode="scheduled")
    refused = call("remember", mode="scheduled", text="Likes jazz")

    assert listed.ok
    assert refused.activity["status"] == "refused"
    assert Memory.objects.count() == 1


def test_unified_search_finds_memories():
    memory = services.memory_create_unchecked(text="Sister Ana lives in Lisbon", category="person")

    hits = call("search", query="lisbon", kinds=["memory"]).result["hits"]

    assert [(h["kind"], h["id"]) for h in hits] == [("memory", memory.pk)]
