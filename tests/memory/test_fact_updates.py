"""Fact updates on natural phrasing: for each pair of phrasings (an earlier
fact, a later one of the same subject), through real chat turns, with the demo provider and
with a fake model giving the verdict: the later fact supersedes the earlier, the earlier stays
in history and is revertable, and the next turn's context carries only the current one.

The fake model files each fact in the owner's own words and under another category than the
earlier one, with keyword-only recall: the check's candidates must come from the subject
(talorys/lib/subjects.py), not from shared words or the category.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent.runner.inputs import read_inputs
from memory.models import Memory
from talorys.owner.services.settings import owner_settings_update
from tests.agent.fake_openai import text, tool_calls, verdict
from tests.agent.test_runner import TURN_DATABASE
from tests.memory.test_conflict import sent_facts
from tests.memory.test_turn_recall import say, system_prompt

pytestmark = TURN_DATABASE  # a turn's trips see committed rows only

# (what the owner says first, what later; the demo's memories of each).
PAIRS = [
    ("I live in Berlin", "I moved to Lisbon", "Lives in Berlin", "Lives in Lisbon"),
    (
        "remember that I live in Berlin",
        "I'm living in Lisbon now",
        "Lives in Berlin",
        "Lives in Lisbon",
    ),
    ("I moved to Berlin", "remember that I live in Lisbon", "Lives in Berlin", "Lives in Lisbon"),
    (
        "I'm based in Porto",
        "I relocated to Madrid last spring",
        "Lives in Porto",
        "Lives in Madrid",
    ),
    ("I work at Acme", "I started working at Globex", "Works at Acme", "Works at Globex"),
    ("remember that I work at Acme", "I left Acme", "Works at Acme", "No longer works at Acme"),
    ("I started working at Acme", "I work at Initech now", "Works at Acme", "Works at Initech"),
    (
        "my sister is called Ana",
        "remember that my sister's name is Maria",
        "Sister is called Ana",
        "Sister is called Maria",
    ),
    (
        "remember that my dog is called Rex",
        "my dog is called Bruno",
        "Dog is called Rex",
        "Dog is called Bruno",
    ),
    (
        "I'm allergic to peanuts",
        "I'm no longer allergic to peanuts",
        "Allergic to peanuts",
        "No longer allergic to peanuts",
    ),
    ("remember that I eat meat", "I no longer eat meat", "Eats meat", "No longer eats meat"),
    (
        "remember that my phone number is 555 1234",
        "remember that my phone number is 555 9876",
        "Phone number is 555 1234",
        "Phone number is 555 9876",
    ),
    (
        "remember that I'm vegetarian",
        "I'm no longer vegetarian",
        "Is vegetarian",
        "Is no longer vegetarian",
    ),
    ("remember that I have a dog", "I no longer have a dog", "Has a dog", "No longer has a dog"),
    (
        "my phone number is 555 1234",
        "my new phone number is 555 9876",
        "Phone number is 555 1234",
        "Phone number is 555 9876",
    ),
    (
        "I work at Siemens",
        "I left Siemens and now work at Bosch",
        "Works at Siemens",
        "Works at Bosch",
    ),
    ("I'm vegetarian", "I eat meat again", "Is vegetarian", "Eats meat"),
    ("I'm a vegan", "I'm vegetarian now", "Is vegan", "Is vegetarian"),
]
IDS = [later for _, later, _, _ in PAIRS]


def supersede_change(api: Any, conversation: int, memory: Memory) -> dict[str, Any]:
    """The change under the reply that superseded ``memory``."""
    detail = api.get(f"/api/conversations/{conversation}").json()
    changes = [c for m in detail["messages"] for c in m["changes"] if c["object_id"] == memory.pk]
    (change,) = [c for c in changes if c["after"] and c["after"].get("superseded_by_id")]
    return change


def assert_superseded_revertable(
    api: Any, conversation: int, earlier: Memory, later: Memory
) -> None:
    earlier.refresh_from_db()
    assert earlier.superseded_by_id == later.pk and earlier.deleted_at is None
    assert [r.action for r in earlier.revisions.order_by("id")] == ["create", "supersede"]
    history = api.get(f"/api/memories/{earlier.pk}/history").json()["items"]
    assert history[0]["action"] == "supersede"
    change = supersede_change(api, conversation, earlier)
    assert api.post(f"/api/changes/{change['id']}/revert").status_code == 200
    earlier.refresh_from_db()
    assert earlier.superseded_by_id is None


def model_words(said: str) -> str:
    """What the fake model files: the owner's own sentence."""
    words = said.removeprefix("remember that ")
    return words[:1].upper() + words[1:]


@pytest.mark.parametrize(("first", "then", "old_text", "new_text"), PAIRS, ids=IDS)
def test_with_the_demo_the_later_fact_supersedes_the_earlier(api, first, then, old_text, new_text):
    conversation, _ = say(api, first)
    earlier = Memory.objects.get(text=old_text)

    _, reply = say(api, then, conversation)

    later = Memory.objects.get(text=new_text)
    assert f"That replaces what I had before ({old_text})" in reply
    assert list(Memory.objects.filter(superseded_by=None).values_list("text", flat=True)) == [
        new_text
    ]
    prompt = read_inputs(text=then).system_prompt()
    assert f"- {new_text}" in prompt and f"- {old_text}" not in prompt
    assert_superseded_revertable(api, conversation, earlier, later)


@pytest.mark.parametrize(("first", "then", "_old", "_new"), PAIRS, ids=IDS)
def test_with_a_model_giving_the_verdict_the_later_fact_supersedes(
    api, fake_openai, first, then, _old, _new
):
    owner_settings_update(
        model_base_url=fake_openai.base_url, model_name="fake-model", semantic_enabled=False
    )
    old_text, new_text = model_words(first), model_words(then)
    fake_openai.script(
        tool_calls(("remember", json.dumps({"text": old_text, "category": "fact"}))),
        text("Noted."),
    )
    conversation, _ = say(api, first)
    earlier = Memory.objects.get(text=old_text)
    fake_openai.script(
        tool_calls(("remember", json.dumps({"text": new_text, "category": "place"}))),
        text("Noted."),
    )
    fake_openai.script_json(verdict("updates", earlier.pk, "changed"))

    say(api, then, conversation)

    # The model was shown the earlier fact, though it shares neither words nor category.
    shown = sent_facts(fake_openai.json_requests[-1])["remembered"]
    assert {"id": earlier.pk, "text": old_text} in shown
    later = Memory.objects.get(text=new_text)
    fake_openai.script(text("Here is what I know."))
    say(api, "What do you know about me?", conversation)
    prompt = system_prompt(fake_openai)
    assert f"- {new_text}" in prompt and f"- {old_text}" not in prompt
    assert_superseded_revertable(api, conversation, earlier, later)


def test_done_when_the_readme_example_leaves_one_home_and_search_finds_it(api, local_embeddings):
    """The README's example end to end, with the default install (demo model, semantic recall on)."""
    conversation, _ = say(api, "remember that I live in Berlin")
    say(api, "I moved to Lisbon", conversation)
    _, reply = say(api, "remember that I live in Lisbon now", conversation)

    current = list(Memory.objects.filter(superseded_by=None).values_list("text", flat=True))
    assert current == ["Lives in Lisbon"]
    assert Memory.objects.get(text="Lives in Berlin").superseded_by.text == "Lives in Lisbon"
    found = api.get("/api/search", {"q": "where do I live", "kinds": "memories"}).json()
    assert found["mode"] == "hybrid"
    assert [hit["title"] for hit in found["items"]] == ["Lives in Lisbon"]
    current_page = api.client.get("/memories/").content.decode()
    superseded_page = api.client.get("/memories/?show=superseded").content.decode()
    assert "Lives in Lisbon" in current_page and "Lives in Berlin" not in current_page
    assert "Lives in Berlin" in superseded_page
