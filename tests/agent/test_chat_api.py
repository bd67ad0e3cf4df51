"""POST /api/chat (server-sent events), cancel, and the conversations API."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest
from django.utils import timezone

from agent.models import Conversation, Message
from talorys.workspace.models import Task
from tests.agent.fake_openai import text, tool_calls
from tests.agent.test_runner import TURN_DATABASE, conversation_with, use_fake

pytestmark = TURN_DATABASE  # a turn's trips see committed rows only


def read_events(response: Any) -> list[tuple[str, dict[str, Any]]]:
    """The (event name, data) pairs of an SSE response from the test client."""

    raw = response.streamed.decode()  # ApiClient.stream's
    assert raw.endswith("\n\n")
    pairs = []
    for block in raw.strip().split("\n\n"):
        *id_line, name_line, data_line = block.split("\n")
        data = json.loads(data_line.removeprefix("data: "))
        # Each event's id, as the SSE field and in the data, alike.
        assert id_line == [f"id: {data['id']}"]
        pairs.append((name_line.removeprefix("event: "), data))
    return pairs


def busy(conversation: Conversation) -> Conversation:
    conversation.turn_id = "running-elsewhere"
    conversation.turn_lease_until = timezone.now() + dt.timedelta(seconds=30)
    conversation.save()
    return conversation


def test_chat_streams_a_tool_turn_that_creates_a_task(api, fake_openai):
    use_fake(fake_openai)
    fake_openai.script(
        tool_calls(("create_task", '{"title": "Renew passport", "priority": 3}'), split=4),
        text("Added ", "it."),
    )

    response = api.stream("/api/chat", {"text": "Add a task to renew my passport"})

    assert response.status_code == 200
    assert response["Content-Type"] == "text/event-stream"
    assert response["Cache-Control"] == "no-cache"
    stream = read_events(response)
    assert [name for name, _ in stream] == ["title", "start", "tool", "text", "text", "done"]
    assert all(data["type"] == name for name, data in stream)
    assert stream[2][1]["activity"]["tool"] == "create_task"
    assert stream[-1][1]["status"] == "complete"
    assert Task.objects.filter(title="Renew passport", priority=3).exists()

    conversation_id = stream[0][1]["conversation_id"]
    detail = api.get(f"/api/conversations/{conversation_id}").json()
    assert detail["title"] == "Add a task to renew my…"  # its first six words
    assert [(m["role"], m["content"], m["status"]) for m in detail["messages"]] == [
        ("user", "Add a task to renew my passport", "complete"),
        ("assistant", "Added it.", "complete"),
    ]
    activity = detail["messages"][1]["tool_activity"]
    assert activity[0]["tool"] == "create_task"
    assert activity[0]["status"] == "ok"
    assert {"origin", "created_at", "error_code"} <= set(detail["messages"][1])


def test_chat_continues_a_conversation(api, fake_openai):
    use_fake(fake_openai)
    conversation = conversation_with(("user", "hi"), ("assistant", "Hello!"))
    fake_openai.script(text("Fine, thanks."))

    response = api.stream("/api/chat", {"conversation_id": conversation.pk, "text": "How are you?"})

    names = [name for name, _ in read_events(response)]
    assert names == ["start", "text", "done"]
    assert conversation.messages.count() == 4


def test_a_busy_conversation_answers_409_before_streaming_and_changes_nothing(api, fake_openai):
    use_fake(fake_openai)
    conversation = busy(conversation_with(("user", "first")))

    response = api.stream("/api/chat", {"conversation_id": conversation.pk, "text": "second"})

    assert response.status_code == 409
    assert response["Content-Type"].startswith("application/json")
    assert response.json()["error"] == {
        "code": "CONFLICT",
        "message": "A response is already being generated in this conversation.",
    }
    assert conversation.messages.count() == 1
    assert fake_openai.requests == []


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"text": ""}, 422, "VALIDATION"),
        ({"text": "   "}, 422, "VALIDATION"),
        ({"text": "hi", "model": "gpt-5"}, 422, "VALIDATION"),
        ({"text": "x" * 32_001}, 422, "VALIDATION"),
        ({"conversation_id": 999, "text": "hi"}, 404, "NOT_FOUND"),
        ({"retry": True}, 422, "VALIDATION"),
        # One re-run at a time: the wire's switches name one of them.
        ({"conversation_id": 1, "text": "x", "edit": True, "retry": True}, 422, "VALIDATION"),
        ({"conversation_id": 1, "regenerate": True, "edit": True}, 422, "VALIDATION"),
    ],
)
def test_bad_chat_requests_are_refused_and_change_nothing(api, body, status, code):
    response = api.stream("/api/chat", body)

    assert response.status_code == status
    assert response.json()["error"]["code"] == code
    assert not Conversation.objects.exists()
    assert not Message.objects.exists()


def test_chat_needs_the_owner_and_csrf(api, anon_api):
    assert anon_api.stream("/api/chat", {"text": "hi"}).status_code == 401
    api.csrf_token = ""
    response = api.stream("/api/chat", {"text": "hi"})
    assert response.status_code == 403
    assert not Message.objects.exists()


def test_retry_through_the_api(api, fake_openai):
    use_fake(fake_openai)
    conversation = conversation_with(("user", "hello"), ("assistant", "", "error"))
    fake_openai.script(text("Hi again."))

    response = api.stream("/api/chat", {"conversation_id": conversation.pk, "retry": True})

    assert [name for name, _ in read_events(response)] == ["start", "text", "done"]
    assert list(conversation.messages.values_list("content", "status")) == [
        ("hello", "complete"),
        ("Hi again.", "complete"),
    ]


def test_cancel_flags_the_running_turn(api):
    conversation = busy(conversation_with(("user", "hi")))

    response = api.post("/api/chat/cancel", {"conversation_id": conversation.pk})

    assert response.status_code == 200
    assert response.json() == {"cancelled": True}
    conversation.refresh_from_db()
    assert conversation.turn_cancel_requested


def test_cancel_with_nothing_running(api):
    idle = conversation_with(("user", "hi"))
    assert api.post("/api/chat/cancel", {"conversation_id": idle.pk}).json() == {"cancelled": False}
    assert api.post("/api/chat/cancel", {"conversation_id": 999}).status_code == 404
    assert api.post("/api/chat/cancel", {}).status_code == 422
    idle.refresh_from_db()
    assert not idle.turn_cancel_requested


def test_conversations_are_listed_newest_first_with_a_count(api):
    older = conversation_with(("user", "a"))
    newer = conversation_with(("user", "b"))
    Conversation.objects.filter(pk=older.pk).update(
        updated_at=timezone.now() - dt.timedelta(hours=1)
    )

    page = api.get("/api/conversations", {"limit": 1}).json()

    assert page["count"] == 2
    assert [item["id"] for item in page["items"]] == [newer.pk]
    assert set(page["items"][0]) == {"id", "title", "origin", "model", "created_at", "updated_at"}


def test_deleting_a_conversation_removes_its_messages(api):
    conversation = conversation_with(("user", "a"), ("assistant", "b"))

    assert api.delete(f"/api/conversations/{conversation.pk}").status_code == 204
    assert api.get("/api/conversations").json()["count"] == 0  # in the bin
    assert api.delete(f"/api/bin/conversation/{conversation.pk}").status_code == 204
    assert not Message.objects.exists()
    assert api.get(f"/api/conversations/{conversation.pk}").status_code == 404
    assert api.delete(f"/api/conversations/{conversation.pk}").status_code == 404


def test_a_conversation_with_a_running_turn_cannot_be_deleted(api):
    conversation = busy(conversation_with(("user", "a")))

    response = api.delete(f"/api/conversations/{conversation.pk}")

    assert response.status_code == 409
    assert Conversation.objects.filter(pk=conversation.pk).exists()


def test_a_silent_model_gets_keep_alive_comments_and_the_turn_still_completes(
    api, fake_openai, settings
):
    from tests.agent.fake_openai import Stall, chunk, events

    settings.SSE_KEEPALIVE_SECONDS = 0.2
    use_fake(fake_openai)
    fake_openai.script(
        events(chunk({"content": "Thinking"}), Stall(1.0), chunk({"content": " done."}))
    )

    response = api.stream("/api/chat", {"text": "Take your time"})
    raw = response.streamed.decode()
    assert raw.count(": keep-alive\n\n") >= 3
    events_only = "".join(
        block + "\n\n" for block in raw.split("\n\n") if block and not block.startswith(":")
    )
    names = [
        line.removeprefix("event: ")
        for line in events_only.splitlines()
        if line.startswith("event: ")
    ]
    assert names == ["title", "start", "text", "text", "done"]
    reply = Message.objects.get(role="assistant")
    assert (reply.status, reply.content) == ("complete", "Thinking done.")
