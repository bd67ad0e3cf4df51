"""Provenance and validity: every revision says who made it, from which turn
and when; facts can say since when they hold; supersede shows and reverses."""

from __future__ import annotations

import pytest
from django.test import Client

from memory import services as memory_services
from memory.models import Memory, MemoryRevision
from talorys.accounts.services import api_token_create
from talorys.lib.actors import Actor
from talorys.lib.tools import ToolContext
from tests.memory.test_memory_tools import call

pytestmark = pytest.mark.django_db


def test_a_chat_tool_revision_names_the_turn_and_the_history_shows_it(api):
    from agent.executor import ToolExecutor
    from agent.models import Conversation, Message
    from talorys.providers.base import ToolCall

    conversation = Conversation.objects.create(title="Facts")
    reply = Message.objects.create(conversation=conversation, role="assistant", content="")
    ctx = ToolContext(conversation_id=conversation.pk, message_id=reply.pk, source="chat")
    outcome = ToolExecutor(ctx=ctx, max_tool_calls=5).execute(
        ToolCall(id="c1", name="remember", arguments={"text": "Plays the oboe"})
    )
    assert outcome.ok, outcome.result
    memory = Memory.objects.get()

    (revision,) = api.get(f"/api/memories/{memory.pk}/history").json()["items"]

    assert revision["actor"] == "chat" and revision["source"] == "chat"
    assert revision["conversation_id"] == conversation.pk
    assert revision["message_id"] == reply.pk
    assert revision["created_at"]


def test_owner_api_token_and_import_writes_name_their_author(api, owner):
    api.post("/api/memories", {"text": "Likes figs"})
    _, raw = api_token_create(user=owner, name="script", scope="write")
    token_client = Client()
    response = token_client.post(
        "/api/memories",
        data={"text": "Likes dates"},
        content_type="application/json",
        headers={"Authorization": f"Bearer {raw}"},
    )
    assert response.status_code == 201, response.content
    memory_services.memory_create_unchecked(
        text="Likes plums", source="import", actor=Actor(source="import")
    )

    actors = dict(MemoryRevision.objects.values_list("text", "actor"))

    assert actors["Likes figs"] == "owner"
    assert actors["Likes dates"].startswith("token:")
    assert actors["Likes plums"] == "import"


def test_validity_dates_are_stored_shown_and_checked(api):
    created = api.post(
        "/api/memories",
        {"text": "Lives in Berlin", "category": "place", "valid_from": "2025-03-01"},
    )
    assert created.status_code == 201
    body = created.json()
    assert body["valid_from"] == "2025-03-01" and body["valid_to"] is None

    backwards = api.post(
        "/api/memories",
        {"text": "Worked at Acme", "valid_from": "2024-05-01", "valid_to": "2023-01-01"},
    )
    far = api.post("/api/memories", {"text": "Born", "valid_from": "1066-10-14"})
    patch = api.patch(f"/api/memories/{body['id']}", {"valid_to": "2020-01-01"})

    assert backwards.status_code == far.status_code == 422
    assert patch.status_code == 422 and "valid_from" in patch.json()["error"]["message"]
    assert Memory.objects.count() == 1
    assert Memory.objects.get().valid_to is None


def test_a_remembered_fact_with_a_start_date_closes_the_one_it_supersedes():
    berlin = memory_services.memory_create_checked(text="Lives in Berlin", category="place").memory

    lisbon = call(
        "remember", text="Moved to Lisbon", category="place", valid_from="2026-06-01"
    ).result

    berlin.refresh_from_db()
    assert lisbon["superseded"]["id"] == berlin.pk
    assert str(berlin.valid_to) == "2026-06-01"
    assert lisbon["memory"]["valid_from"] == "2026-06-01"


def test_the_owner_lists_superseded_facts_and_can_make_one_current_again(api):
    berlin = memory_services.memory_create_checked(text="Lives in Berlin", category="place").memory
    memory_services.memory_create_checked(text="Moved to Lisbon", category="place")

    current = [m["text"] for m in api.get("/api/memories").json()["items"]]
    superseded = api.get("/api/memories", {"superseded": "true"}).json()["items"]
    assert current == ["Moved to Lisbon"]
    assert [(m["text"], m["superseded_by"] is not None) for m in superseded] == [
        ("Lives in Berlin", True)
    ]

    response = api.patch(f"/api/memories/{berlin.pk}", {"superseded_by": None})

    assert response.status_code == 200 and response.json()["superseded_by"] is None
    assert [r.action for r in berlin.revisions.order_by("id")] == [
        "create",
        "supersede",
        "reinstate",
    ]
    refused = api.patch(f"/api/memories/{berlin.pk}", {"superseded_by": 3})
    assert refused.status_code == 422
