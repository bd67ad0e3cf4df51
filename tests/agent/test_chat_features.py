"""The chat page's server side: rename and search, the model's title, regenerate and edit, what
a stored message shows (html, error_message, tool sentences) and the live events' extra fields.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from channels.testing import WebsocketCommunicator
from django.test import Client

from agent import selectors, services
from agent.models import Conversation
from agent.runner import begin_turn, stream_turn
from talorys.history.changes import change_revert
from talorys.history.models import Change
from talorys.lib.errors import ValidationFailed
from talorys.owner.models import UsageDay
from tests.agent.fake_openai import completion, error, text
from tests.agent.test_consumer import communicator
from tests.agent.test_runner import TURN_DATABASE, conversation_with, kinds, turn, use_fake
from tests.conftest import OWNER_PASSWORD
from tests.waiting import HANG_SECONDS

pytestmark = TURN_DATABASE  # a turn's trips see committed rows only


def title_answer(title: str) -> Any:
    return completion(json.dumps({"title": title}))


def shown(conversation: Conversation) -> list[tuple[str, str]]:
    return [
        (m.role, m.content) for m in selectors.shown_messages().filter(conversation=conversation)
    ]


# --- rename and search -------------------------------------------------------------------------


def test_the_owner_renames_a_conversation_and_the_change_log_keeps_it(api):
    conversation = conversation_with(("user", "hello there"))
    conversation.refresh_from_db()
    updated_at = conversation.updated_at

    response = api.patch(f"/api/conversations/{conversation.pk}", {"title": "  Trip plans  "})

    assert response.status_code == 200
    assert response.json()["title"] == "Trip plans"
    assert set(response.json()) == {"id", "title", "origin", "model", "created_at", "updated_at"}
    conversation.refresh_from_db()
    assert (conversation.title, conversation.title_source) == ("Trip plans", "owner")
    assert conversation.updated_at == updated_at  # a rename does not move it up the list
    change = Change.objects.get(kind="conversation", action="update")
    assert (change.before, change.after, change.source) == (
        {"title": "Earlier"},
        {"title": "Trip plans"},
        "owner",
    )
    change_revert(change_id=change.pk)
    conversation.refresh_from_db()
    assert conversation.title == "Earlier"


@pytest.mark.parametrize("body", [{"title": ""}, {"title": "   "}, {"title": "x" * 201}, {}])
def test_a_bad_title_is_refused_and_changes_nothing(api, body):
    conversation = conversation_with(("user", "hello"))

    response = api.patch(f"/api/conversations/{conversation.pk}", body)

    assert response.status_code == 422
    assert response.json()["error"]["code"] == "VALIDATION"
    conversation.refresh_from_db()
    assert (conversation.title, conversation.title_source) == ("Earlier", "message")
    assert not Change.objects.exists()


def test_renaming_a_binned_or_unknown_conversation_is_not_found(api):
    conversation = conversation_with(("user", "hello"))
    services.conversation_delete(conversation_id=conversation.pk)

    assert api.patch(f"/api/conversations/{conversation.pk}", {"title": "X"}).status_code == 404
    assert api.patch("/api/conversations/999999", {"title": "X"}).status_code == 404
    with pytest.raises(ValidationFailed):
        services.conversation_rename(conversation_id=conversation.pk, title="a\x00b")


def test_conversations_are_found_by_title_or_by_what_was_said(api):
    by_title = conversation_with(("user", "hello"))
    services.conversation_rename(conversation_id=by_title.pk, title="Lisbon trip")
    by_message = conversation_with(("user", "what about LISBON in May?"), ("assistant", "Nice."))
    conversation_with(("user", "groceries"), ("assistant", "Milk, eggs."))
    replaced = conversation_with(("user", "hi"), ("assistant", "lisbon, maybe"))
    replaced.messages.filter(role="assistant").update(replaced_at=by_title.created_at)
    binned = conversation_with(("user", "lisbon again"))
    services.conversation_delete(conversation_id=binned.pk)

    page = api.get("/api/conversations", {"q": "lisbon"}).json()

    assert page["count"] == 2
    assert {item["id"] for item in page["items"]} == {by_title.pk, by_message.pk}
    assert api.get("/api/conversations", {"q": "x" * 201}).status_code == 422
    assert api.get("/api/conversations").json()["count"] == 4


# --- the model's title -------------------------------------------------------------------------


def test_the_first_reply_is_followed_by_the_models_title(db, fake_openai):
    use_fake(fake_openai)
    fake_openai.script(text("Try the tram to Belém."))
    fake_openai.script_json(title_answer("“Lisbon day trip ideas.”"))

    result = turn(text="what should I see in lisbon on a sunday with kids")

    assert kinds(result) == ["title", "start", "text", "done", "title"]
    conversation = Conversation.objects.get()
    assert result[0]["title"] == "what should I see in lisbon…"
    assert result[-1] == {
        "type": "title",
        "conversation_id": conversation.pk,
        "title": "Lisbon day trip ideas",
    }
    assert (conversation.title, conversation.title_source) == ("Lisbon day trip ideas", "model")
    (asked,) = fake_openai.json_requests
    assert asked["max_tokens"] <= 32
    assert "at most 6 words" in asked["messages"][0]["content"]
    assert "lisbon on a sunday" in asked["messages"][1]["content"]
    assert "tram to Belém" in asked["messages"][1]["content"]
    assert UsageDay.objects.get().ai_requests == 2  # the reply's step and the title

    # Later replies ask nothing more.
    fake_openai.script(text("Pastéis too."))
    again = turn(conversation_id=conversation.pk, text="and food?")
    assert kinds(again) == ["start", "text", "done"]
    assert len(fake_openai.json_requests) == 1


@pytest.mark.parametrize(
    ("answer", "asked_plainly"),
    [
        (error(500, "The model crashed"), True),
        (completion("not json at all"), True),
        (completion(json.dumps({"name": "no title key"})), False),
        (title_answer("   "), False),
        (error(401, "bad key"), False),
    ],
)
def test_a_failed_title_keeps_the_first_words(db, fake_openai, answer, asked_plainly):
    use_fake(fake_openai)
    fake_openai.script(text("Hello!"))
    fake_openai.script_json(answer)
    fake_openai.script_plain(completion("  \n  "))  # asked again plainly: still no words

    result = turn(text="hi there friend")

    assert kinds(result) == ["title", "start", "text", "done"]
    assert result[-1]["status"] == "complete"
    conversation = Conversation.objects.get()
    assert (conversation.title, conversation.title_source) == ("hi there friend", "message")
    assert len(fake_openai.json_requests) == 1
    assert len(fake_openai.plain_requests) == int(asked_plainly)


@pytest.mark.parametrize(
    "refusal",
    [
        error(400, "response_format is not supported by this model"),
        completion("Sure! A good title would be: Lisbon with kids"),
    ],
)
def test_a_model_without_json_mode_is_asked_for_the_title_in_plain_text(db, fake_openai, refusal):
    use_fake(fake_openai)
    fake_openai.script(text("Try the tram to Belém."))
    fake_openai.script_json(refusal)
    fake_openai.script_plain(
        completion('**Title:** "Lisbon sights with kids on Sunday afternoon."')
    )

    result = turn(text="what should I see in lisbon on a sunday with kids")

    assert result[0]["title"] == "what should I see in lisbon…"  # six words at most
    assert result[-1]["title"] == "Lisbon sights with kids on Sunday"
    conversation = Conversation.objects.get()
    assert (conversation.title, conversation.title_source) == (
        "Lisbon sights with kids on Sunday",
        "model",
    )
    (plain,) = fake_openai.plain_requests
    assert "response_format" not in plain and plain["stream"] is False
    assert "at most 6 words" in plain["messages"][0]["content"]
    assert "lisbon on a sunday" in plain["messages"][1]["content"]
    assert UsageDay.objects.get().ai_requests == 3  # the reply, the JSON try and the plain one


def test_the_first_words_fallback_never_passes_six_words(db):
    assert services.conversation_title(text="one two three four five six") == (
        "one two three four five six"
    )
    assert services.conversation_title(text="one two three four five six seven eight") == (
        "one two three four five six…"
    )


def test_no_title_is_asked_without_budget_or_after_a_failed_reply(db, fake_openai):
    use_fake(fake_openai, daily_ai_requests=1)
    fake_openai.script(text("Hello!"))

    assert kinds(turn(text="hi there")) == ["title", "start", "text", "done"]
    assert fake_openai.json_requests == []

    use_fake(fake_openai, daily_ai_requests=100)
    fake_openai.script(error(500, "down"))
    assert kinds(turn(text="second conversation"))[-2:] == ["error", "done"]
    assert fake_openai.json_requests == []
    assert set(Conversation.objects.values_list("title_source", flat=True)) == {"message"}


def test_the_demo_provider_is_not_asked_for_a_title(db):
    result = turn(text="add a task to buy oat milk")

    assert kinds(result)[-1] == "done" and kinds(result).count("title") == 1  # none after
    assert result[0]["title"] == "Add task: buy oat milk"  # its own short title, from the start
    conversation = Conversation.objects.get()
    assert (conversation.title, conversation.title_source) == ("Add task: buy oat milk", "message")


def test_a_rename_during_the_first_reply_is_never_overwritten(db, fake_openai):
    use_fake(fake_openai)
    fake_openai.script(text("Sure."))
    fake_openai.script_json(title_answer("Model title"))

    async def scenario() -> list[dict[str, Any]]:
        start = await begin_turn(text="plan my week")
        await sync_to_async(services.conversation_rename)(
            conversation_id=start.conversation_id, title="My week"
        )
        return [event async for event in stream_turn(start)]

    result = async_to_sync(scenario)()

    assert kinds(result) == ["title", "start", "text", "done"]
    assert Conversation.objects.get().title == "My week"
    assert fake_openai.json_requests == []
    # And the store itself refuses once the owner has named it.
    conversation = Conversation.objects.get()
    assert not services.conversation_title_generated(conversation_id=conversation.pk, title="X")


@pytest.mark.django_db(transaction=True)
def test_the_socket_sends_the_models_title_after_done(owner, fake_openai):
    client = Client()
    assert client.login(username="owner", password=OWNER_PASSWORD)
    session_cookie = f"sessionid={client.cookies['sessionid'].value}".encode()
    use_fake(fake_openai)
    fake_openai.script(text("Hi!"))
    fake_openai.script_json(title_answer("A friendly greeting"))

    async def scenario() -> list[dict[str, Any]]:
        ws: WebsocketCommunicator = communicator(session_cookie)
        await ws.connect()
        try:
            await ws.send_json_to({"type": "send", "text": "hello you"})
            received = [await ws.receive_json_from(timeout=HANG_SECONDS)]
            while received[-1]["type"] != "title" or len(received) == 1:
                received.append(await ws.receive_json_from(timeout=HANG_SECONDS))
            return received
        finally:
            await ws.disconnect()

    received = async_to_sync(scenario)()

    assert [e["type"] for e in received] == ["title", "start", "text", "done", "title"]
    assert received[-1]["title"] == "A friendly greeting"
    assert received[3]["html"] == "<p>Hi!</p>\n"
