"""Every turn uses recall: "I moved to Lisbon" after "I
live in Berlin" supersedes the old fact, with the demo provider and with a fake model giving the
verdict, and the next turn's context carries Lisbon only; related items reach the prompt; the
search tools are recall's, in chat and scheduled mode alike."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent.runner.inputs import read_inputs
from memory.models import Memory
from talorys.lib.tools import get_tool
from talorys.workspace import services
from tests.agent.fake_openai import text, tool_calls, verdict
from tests.agent.test_chat_api import read_events
from tests.agent.test_runner import TURN_DATABASE, use_fake

pytestmark = TURN_DATABASE  # a turn's trips see committed rows only


def say(api: Any, words: str, conversation_id: int | None = None) -> tuple[int, str]:
    body: dict[str, Any] = {"text": words}
    if conversation_id is not None:
        body["conversation_id"] = conversation_id
    events = read_events(api.stream("/api/chat", body))
    assert events[-1][1]["status"] == "complete", events
    reply = "".join(data["delta"] for name, data in events if name == "text")
    return events[0][1]["conversation_id"], reply


def system_prompt(fake_openai: Any) -> str:
    return fake_openai.requests[-1]["messages"][0]["content"]


def test_done_when_with_the_demo_provider(api):
    conversation, _ = say(api, "I live in Berlin")
    _, reply = say(api, "I moved to Lisbon", conversation)

    assert "replaces what I had before (Lives in Berlin)" in reply
    berlin = Memory.objects.get(text="Lives in Berlin")
    # The demo files every way of saying where the owner lives alike (talorys/providers/demo/facts.py).
    assert berlin.superseded_by.text == "Lives in Lisbon"
    prompt = read_inputs(text="Where do I live now?").system_prompt()
    assert "- Lives in Lisbon" in prompt and "Berlin" not in prompt


def test_done_when_with_a_fake_model_giving_the_verdict(api, fake_openai):
    use_fake(fake_openai)
    fake_openai.script(
        tool_calls(("remember", json.dumps({"text": "Lives in Berlin", "category": "place"}))),
        text("Noted."),
    )
    conversation, _ = say(api, "I live in Berlin")
    berlin = Memory.objects.get(text="Lives in Berlin")
    fake_openai.script(
        tool_calls(("remember", json.dumps({"text": "Lives in Lisbon", "category": "place"}))),
        text("Noted: Lisbon."),
    )
    fake_openai.script_json(verdict("updates", berlin.pk, "moved"))
    say(api, "I moved to Lisbon", conversation)

    tool_result = json.loads(fake_openai.requests[-1]["messages"][-1]["content"])
    assert tool_result["superseded"]["id"] == berlin.pk
    berlin.refresh_from_db()
    assert berlin.superseded_by.text == "Lives in Lisbon"

    fake_openai.script(text("You live in Lisbon."))
    say(api, "Where do I live?", conversation)
    prompt = system_prompt(fake_openai)
    assert "- Lives in Lisbon" in prompt and "Berlin" not in prompt

    # The supersede is a change under the reply that made it, and reverting it brings Berlin back.
    detail = api.get(f"/api/conversations/{conversation}").json()
    changes = [c for m in detail["messages"] for c in m["changes"] if c["object_id"] == berlin.pk]
    assert [c["action"] for c in changes] == ["create", "update"]
    supersede = changes[1]
    assert supersede["after"]["superseded_by_id"] is not None
    assert api.post(f"/api/changes/{supersede['id']}/revert").status_code == 200
    berlin.refresh_from_db()
    assert berlin.superseded_by_id is None


def test_the_prompt_carries_related_items_but_not_this_conversations_own_messages(api, fake_openai):
    use_fake(fake_openai)
    services.note_create(title="Skopelos ferries", content="The 9:10 from Volos is the fast one.")
    services.task_create(title="Pay the electricity bill")
    fake_openai.script(text("Sure."), text("Sure."))
    conversation, _ = say(api, "Tell me about the Skopelos ferry")
    say(api, "And the Skopelos ferry again", conversation)

    prompt = system_prompt(fake_openai)
    section = prompt.split("past conversations that may relate to this message")[1]
    assert "Skopelos ferries" in section and "electricity" not in section
    assert "Tell me about the Skopelos ferry" not in section


def test_related_items_are_left_out_when_recall_fails(api, fake_openai, monkeypatch):
    from memory import selectors

    use_fake(fake_openai)
    services.note_create(title="Skopelos ferries", content="The 9:10 from Volos.")

    def broken(**kwargs: Any) -> list[str]:
        raise RuntimeError("index unavailable")

    monkeypatch.setattr(selectors, "related_items_for_turn", broken)
    fake_openai.script(text("Sure."))
    say(api, "Tell me about the Skopelos ferry")

    assert "may relate to this message" not in system_prompt(fake_openai)


def test_scheduled_runs_recall_memories_without_the_related_items():
    services.note_create(title="Skopelos ferries", content="The 9:10 from Volos.")
    from memory import services as memory_services

    memory_services.memory_create_unchecked(text="Seasick on small boats")

    inputs = read_inputs(text="Plan my Skopelos boat trip")

    assert inputs.memories == ["Seasick on small boats"] and inputs.related == []


@pytest.mark.parametrize("mode", ["chat", "scheduled"])
def test_the_search_tools_are_recalls_with_the_original_contract(mode):
    from memory.tools import search as recall_tools
    from talorys.workspace.tools import notes, tasks

    for name, original in [
        ("search_tasks", tasks.SearchTasks),
        ("search_notes", notes.SearchNotes),
    ]:
        tool = get_tool(name, mode=mode)
        assert isinstance(tool, original) and type(tool).__module__ == recall_tools.__name__
        assert tool.args is original.args and tool.permission == original.permission
        assert tool.cap == original.cap
    assert type(get_tool("search", mode=mode)) is recall_tools.Search


def test_search_tasks_ranks_by_recall_and_still_finds_a_fragment():
    from tests.memory.test_memory_tools import call

    services.task_create(title="Renew passport")
    moving = services.task_create(title="Book movers for the flat")
    code = services.task_create(title="Ticket INC-20931 follow-up")

    found = call("search_tasks", query="moving flat").result["tasks"]
    assert [t["id"] for t in found] == [moving.pk]
    fragment = call("search_tasks", query="20931").result["tasks"]
    assert [t["id"] for t in fragment] == [code.pk]
