"""Regenerate and edit-and-resend, and what the page reads of a message: html, error_message and
each tool call's sentence, live and stored alike."""

from __future__ import annotations

import json

import pytest

from agent import selectors
from agent.activity import activity_sentence
from agent.models import Conversation, Message
from talorys.lib.errors import ValidationFailed
from tests.agent.fake_openai import error, text, tool_calls
from tests.agent.test_chat_api import read_events
from tests.agent.test_runner import (
    TURN_DATABASE,
    conversation_with,
    kinds,
    sent_messages,
    turn,
    use_fake,
)

pytestmark = TURN_DATABASE  # a turn's trips see committed rows only


def shown(conversation: Conversation) -> list[tuple[str, str]]:
    return [
        (m.role, m.content) for m in selectors.shown_messages().filter(conversation=conversation)
    ]


def rows(conversation: Conversation) -> list[tuple[int, str, str, bool]]:
    return [
        (m.pk, m.role, m.content, m.replaced_at is not None)
        for m in Message.objects.filter(conversation=conversation)
    ]


# --- regenerate --------------------------------------------------------------------------------


def test_regenerate_keeps_the_old_reply_out_of_the_history_and_the_page(api, fake_openai):
    use_fake(fake_openai)
    conversation = conversation_with(
        ("user", "name a fruit"),
        ("assistant", "Banana."),
        ("user", "another"),
        ("assistant", "Kiwi."),
    )
    old_reply = conversation.messages.get(content="Kiwi.")
    fake_openai.script(text("Mango."))

    response = api.stream(
        "/api/chat",
        {"conversation_id": conversation.pk, "regenerate": True, "message_id": old_reply.pk},
    )

    stream = dict(read_events(response))
    assert stream["start"]["replaced_message_ids"] == [old_reply.pk]
    assert stream["done"]["status"] == "complete"
    # The model saw the owner's question again, and not the reply it replaced.
    assert sent_messages(fake_openai.requests[0])[1:] == [
        ("user", "name a fruit"),
        ("assistant", "Banana."),
        ("user", "another"),
    ]
    detail = api.get(f"/api/conversations/{conversation.pk}").json()
    assert [m["content"] for m in detail["messages"]] == [
        "name a fruit",
        "Banana.",
        "another",
        "Mango.",
    ]
    old_reply.refresh_from_db()  # nothing is lost
    assert (old_reply.content, old_reply.status) == ("Kiwi.", "complete")
    assert old_reply.replaced_at is not None
    assert old_reply.pk not in selectors.recallable_messages().values_list("pk", flat=True)

    # The next turn does not see it either.
    fake_openai.script(text("Sure."))
    turn(conversation_id=conversation.pk, text="thanks")
    assert ("assistant", "Kiwi.") not in sent_messages(fake_openai.requests[1])


@pytest.mark.parametrize(
    ("messages", "complaint"),
    [
        ([("user", "hi"), ("assistant", "Half", "error")], "retry it instead"),
        ([("user", "hi"), ("assistant", "Stopped", "cancelled")], "retry it instead"),
        ([("user", "hi")], "no reply to regenerate"),
        ([], "no reply to regenerate"),
    ],
)
def test_regenerate_refusals_change_nothing(db, fake_openai, messages, complaint):
    use_fake(fake_openai)
    conversation = conversation_with(*messages)
    before = rows(conversation)

    with pytest.raises(ValidationFailed, match=complaint):
        turn(conversation_id=conversation.pk, rerun="regenerate")

    assert rows(conversation) == before
    assert Conversation.objects.get().turn_id == ""
    assert fake_openai.requests == []


def test_only_the_last_reply_can_be_regenerated(api, fake_openai):
    use_fake(fake_openai)
    conversation = conversation_with(
        ("user", "a"), ("assistant", "b"), ("user", "c"), ("assistant", "d")
    )
    first_reply = conversation.messages.get(content="b")
    before = rows(conversation)

    response = api.stream(
        "/api/chat",
        {"conversation_id": conversation.pk, "regenerate": True, "message_id": first_reply.pk},
    )

    assert response.status_code == 422
    assert response.json()["error"] == {
        "code": "VALIDATION",
        "message": "Only the last reply can be regenerated.",
    }
    assert rows(conversation) == before
    assert fake_openai.requests == []


# --- edit and resend ---------------------------------------------------------------------------


def test_edit_replaces_the_last_owner_message_and_its_reply_and_runs_the_new_text(db, fake_openai):
    use_fake(fake_openai)
    conversation = conversation_with(
        ("user", "hi"), ("assistant", "Hello!"), ("user", "add milk"), ("assistant", "Which milk?")
    )
    old_question = conversation.messages.get(content="add milk")
    old_reply = conversation.messages.get(content="Which milk?")
    fake_openai.script(text("Oat milk it is."))

    result = turn(
        conversation_id=conversation.pk,
        text="  add oat milk  ",
        rerun="edit",
        message_id=old_question.pk,
    )

    assert kinds(result) == ["start", "text", "done"]
    start = result[0]
    assert start["replaced_message_ids"] == [old_question.pk, old_reply.pk]
    assert sent_messages(fake_openai.requests[0])[1:] == [
        ("user", "hi"),
        ("assistant", "Hello!"),
        ("user", "add oat milk"),
    ]
    assert shown(conversation) == [
        ("user", "hi"),
        ("assistant", "Hello!"),
        ("user", "add oat milk"),
        ("assistant", "Oat milk it is."),
    ]
    assert start["user_message_id"] == conversation.messages.get(content="add oat milk").pk
    # Both old messages are kept, marked replaced.
    assert Message.objects.filter(replaced_at__isnull=False).count() == 2
    assert Message.objects.filter(content="Which milk?").exists()


def test_an_edit_after_a_failed_reply_replaces_both(db, fake_openai):
    use_fake(fake_openai)
    conversation = conversation_with(("user", "wht is up"), ("assistant", "", "error"))
    fake_openai.script(text("Not much."))

    result = turn(conversation_id=conversation.pk, text="what is up", rerun="edit")

    assert result[-1]["status"] == "complete"
    assert shown(conversation) == [("user", "what is up"), ("assistant", "Not much.")]


@pytest.mark.parametrize(
    ("kwargs", "complaint"),
    [
        ({"text": "new", "rerun": "edit", "message_id": "one"}, "Only your own messages"),
        ({"text": "   ", "rerun": "edit"}, "must not be empty"),
        ({"text": "new", "message_id": "first"}, "message_id goes with"),
    ],
)
def test_edit_refusals_change_nothing(db, fake_openai, kwargs, complaint):
    use_fake(fake_openai)
    conversation = conversation_with(
        ("user", "first"), ("assistant", "one"), ("user", "second"), ("assistant", "two")
    )
    if kwargs.get("message_id") in ("first", "one"):  # "one": a reply, not the owner's
        kwargs["message_id"] = conversation.messages.get(content=kwargs["message_id"]).pk
    before = rows(conversation)

    with pytest.raises(ValidationFailed, match=complaint):
        turn(conversation_id=conversation.pk, **kwargs)

    assert rows(conversation) == before
    assert Conversation.objects.get().turn_id == ""
    assert fake_openai.requests == []


def test_an_imported_message_cannot_be_edited_or_regenerated(db, fake_openai):
    use_fake(fake_openai)
    conversation = conversation_with()
    Message.objects.create(conversation=conversation, role="user", content="x", origin="import")
    Message.objects.create(conversation=conversation, role="assistant", content="y")

    for flags in ({"rerun": "edit", "text": "new"}, {"rerun": "regenerate"}):
        with pytest.raises(ValidationFailed, match="imported message"):
            turn(conversation_id=conversation.pk, **flags)
    assert not Message.objects.filter(replaced_at__isnull=False).exists()
    assert fake_openai.requests == []


def test_edit_and_regenerate_need_a_conversation(db):
    for flags in ({"rerun": "edit", "text": "x"}, {"rerun": "regenerate"}):
        with pytest.raises(ValidationFailed, match="conversation_id"):
            turn(**flags)


# --- what the page reads -----------------------------------------------------------------------


def test_a_stored_reply_has_html_tool_sentences_and_the_live_events_agree(api, fake_openai):
    use_fake(fake_openai)
    fake_openai.script(
        tool_calls(("create_task", json.dumps({"title": "Buy oat milk"}))),
        text("Added **Buy oat milk**."),
    )

    stream = read_events(api.stream("/api/chat", {"text": "add a task please"}))

    by_name = {name: data for name, data in stream}
    assert by_name["tool"]["activity"]["sentence"] == "Added the task “Buy oat milk”"
    assert by_name["done"]["html"] == "<p>Added <strong>Buy oat milk</strong>.</p>\n"
    detail = api.get(f"/api/conversations/{by_name['start']['conversation_id']}").json()
    owner, reply = detail["messages"]
    assert (owner["html"], owner["error_message"]) == ("", "")
    assert reply["html"] == by_name["done"]["html"]
    assert reply["tool_activity"][0]["sentence"] == by_name["tool"]["activity"]["sentence"]
    assert reply["error_code"] == ""


def test_a_failed_reply_keeps_the_reason_the_owner_was_told(api, fake_openai):
    use_fake(fake_openai)
    fake_openai.script(error(401, "Invalid API key"))

    stream = dict(read_events(api.stream("/api/chat", {"text": "hello"})))

    assert stream["error"]["code"] == "PROVIDER_AUTH"
    assert stream["error"]["message"]
    assert stream["done"]["html"] == ""
    detail = api.get(f"/api/conversations/{stream['start']['conversation_id']}").json()
    reply = detail["messages"][1]
    assert (reply["status"], reply["error_code"]) == ("error", "PROVIDER_AUTH")
    assert reply["error_message"] == stream["error"]["message"]
    assert (reply["content"], reply["html"]) == ("", "")


def test_a_reply_left_streaming_is_closed_with_a_reason(db, fake_openai):
    use_fake(fake_openai)
    conversation = conversation_with(("user", "hi"), ("assistant", "Hal", "streaming"))
    fake_openai.script(text("ok"))

    turn(conversation_id=conversation.pk, text="still there?")

    stuck = conversation.messages.get(content="Hal")
    assert (stuck.status, stuck.error_code) == ("error", "INTERRUPTED")
    assert "interrupted" in stuck.error_message


@pytest.mark.parametrize(
    ("activity", "sentence"),
    [
        (
            {"tool": "search_tasks", "status": "ok", "summary": "tasks: 1"},
            "Searched your tasks: 1 found",
        ),
        (
            {"tool": "list_notes", "status": "ok", "summary": "notes: 0"},
            "Looked through your notes: 0 found",
        ),
        (
            {"tool": "create_task", "status": "ok", "summary": "task 5: Buy oat milk"},
            "Added the task “Buy oat milk”",
        ),
        (
            {"tool": "append_to_note", "status": "ok", "summary": "note 2: Ideas"},
            "Added to the note “Ideas”",
        ),
        (
            {"tool": "remember", "status": "ok", "summary": "memory 3: Likes tea"},
            "Remembered “Likes tea”",
        ),
        ({"tool": "search", "status": "ok", "summary": "hits: 4"}, "Searched everything: 4 found"),
        ({"tool": "notify_owner", "status": "ok", "summary": "done"}, "Notified you"),
        (
            {
                "tool": "delete_task",
                "status": "awaiting_approval",
                "summary": "Delete the task “X”",
                "action_id": 1,
            },
            "Waiting for your approval to delete the task “X”",
        ),
        (
            {"tool": "update_task", "status": "error", "summary": "Task 9 does not exist."},
            "Failed: Task 9 does not exist.",
        ),
        (
            {"tool": "list_tasks", "status": "refused", "summary": "The tool budget is spent."},
            "Not run: The tool budget is spent.",
        ),
        (
            {"tool": "frobnicate_widgets", "status": "ok", "summary": "done"},
            "Used frobnicate widgets",
        ),
    ],
)
def test_each_tool_call_reads_as_a_sentence(activity, sentence):
    assert activity_sentence(activity) == sentence
