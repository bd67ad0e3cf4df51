"""Which conversation a chat resent to /v1 continues (agent/completions/history.py), the read
tool mode, and /v1's answers that need no model turn."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import Client

from agent.completions.admission import completion_admit, completion_claim
from agent.completions.history import ClientChat, client_chat, conversation_match
from agent.completions.replies import Reply
from agent.completions.schemas import CompletionMessage
from agent.models import Conversation, Message, Origin
from agent.selectors import turn_history
from agent.services import turn_begin, turn_release
from talorys.accounts.models import ApiToken
from talorys.accounts.services import api_token_create
from talorys.lib.errors import ValidationFailed
from talorys.lib.tools import Permission, get_tool, tools_for

pytestmark = pytest.mark.django_db


def said(*pairs: tuple[str, str]) -> list[CompletionMessage]:
    return [CompletionMessage(role=role, content=text) for role, text in pairs]  # type: ignore[arg-type]


def conversation(*rows: tuple[str, str, str], origin: str = Origin.API) -> int:
    made = Conversation.objects.create(title="t", origin=origin)
    for role, content, status in rows:
        Message.objects.create(conversation=made, role=role, content=content, status=status)
    return made.pk


def test_the_chat_is_its_user_and_assistant_messages_and_ends_with_the_users():
    chat = client_chat(
        [
            CompletionMessage(role="system", content="Be a pirate."),
            CompletionMessage(role="user", content=[{"type": "text", "text": "hi"}]),  # type: ignore[list-item]
            CompletionMessage(role="assistant", content="Hello."),
            CompletionMessage(role="tool", content="{}"),
            CompletionMessage(role="user", content="  add a task  "),
        ]
    )
    assert chat == ClientChat(prior=[("user", "hi"), ("assistant", "Hello.")], text="add a task")
    for ending in (said(("user", "hi"), ("assistant", "x")), said(("user", "   "))):
        with pytest.raises(ValidationFailed):
            client_chat(ending)


def test_a_resent_chat_matches_its_api_conversation_whatever_the_activity_lines_and_spacing():
    live = conversation(("user", "hi", "complete"), ("assistant", "Done it.", "complete"))
    # The same messages in a conversation of the chat page are not this client's.
    conversation(("user", "hi", "complete"), ("assistant", "Done it.", "complete"), origin="live")
    shown = "› Added the task “X”\n\nDone   it.\n"
    assert conversation_match([("user", "hi"), ("assistant", shown)]) == live
    assert Conversation.objects.count() == 2


def test_a_failed_exchange_is_left_out_so_that_the_question_asked_again_matches():
    failed = conversation(
        ("user", "hi", "complete"),
        ("assistant", "Hello.", "complete"),
        ("user", "add it", "complete"),
        ("assistant", "", "error"),
    )
    assert conversation_match([("user", "hi"), ("assistant", "Hello.")]) == failed


def test_a_chat_no_conversation_holds_is_kept_once_as_its_clients_history_then_matched(owner):
    token, _raw = api_token_create(user=owner, name="Open WebUI", scope="read")
    messages = said(("user", "hi"), ("assistant", "From another model."), ("user", "go on"))
    admitted = completion_admit(messages=messages, token=token)
    assert admitted.conversation_id is None  # made with the turn's claim
    start = completion_claim(admission=admitted, token=token)

    assert completion_admit(messages=messages, token=token).conversation_id == start.conversation_id
    made = Conversation.objects.get()
    assert (made.origin, made.api_token) == (Origin.API, token)
    rows = list(made.messages.order_by("id").values_list("role", "origin"))
    assert rows == [
        ("user", "client"),
        ("assistant", "client"),
        ("user", "live"),
        ("assistant", "live"),
    ]
    fresh = completion_admit(messages=said(("user", "new")), token=token)
    assert fresh.conversation_id is None  # a new chat: the claim makes its conversation


def test_the_read_mode_offers_read_tools_only():
    names = {tool.name for tool in tools_for("read")}
    assert names and all(get_tool(name, mode="read") for name in names)
    assert {tool.permission for tool in tools_for("read")} == {Permission.READ}
    assert get_tool("create_task", mode="read") is None
    assert get_tool("create_task", mode="chat") is not None


def test_activity_lines_sit_between_paragraphs_and_a_proposal_says_where_to_approve():
    reply = Reply("http://talorys.example/approvals/")
    reply.piece({"type": "text", "delta": "Sure."})
    reply.piece(
        {
            "type": "tool",
            "activity": {"status": "awaiting_approval", "sentence": "Waiting for your approval"},
        }
    )
    reply.piece({"type": "text", "delta": "Approve it when you like."})
    assert reply.content == (
        "Sure.\n\n› Waiting for your approval. Nothing is done until you approve it in "
        "Talorys: http://talorys.example/approvals/\n\nApprove it when you like."
    )


def test_a_body_over_the_limit_is_refused_in_openais_shape(owner, settings):
    settings.MAX_BODY_BYTES = 1000
    _token, raw = api_token_create(user=owner, name="t", scope="write")
    response = Client().post(
        "/v1/chat/completions",
        data="x" * 2000,
        content_type="application/json",
        headers={"Authorization": f"Bearer {raw}"},
    )
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "request_too_large"
    assert set(response.json()["error"]) == {"message", "type", "param", "code"}


def test_a_malformed_body_is_a_400_in_openais_shape(owner):
    _token, raw = api_token_create(user=owner, name="t", scope="write")
    response = Client().post(
        "/v1/chat/completions",
        data="{not json",
        content_type="application/json",
        headers={"Authorization": f"Bearer {raw}"},
    )
    assert response.status_code == 400
    assert response.json()["error"]["type"] == "invalid_request_error"


def test_a_clients_history_is_shown_to_the_model_as_that_clients_and_never_rerun(owner):
    token, _raw = api_token_create(user=owner, name="Open WebUI", scope="write")
    messages = said(("user", "call mum"), ("assistant", "Noted."), ("user", "what now?"))
    start = completion_claim(
        admission=completion_admit(messages=messages, token=token), token=token
    )
    Message.objects.filter(pk=start.assistant_message_id).update(status="complete", content="Hm.")
    turn_release(conversation_id=start.conversation_id, turn_id=start.turn_id)  # the turn ended

    history = turn_history(conversation_id=start.conversation_id, after_id=None)[0]
    frame = "[Sent by the chat client using the API token “Open WebUI” as an earlier message"
    assert [entry.content.startswith(frame) for entry in history] == [True, True, False, False]
    assert history[0].content.endswith("\ncall mum") and history[2].content == "what now?"
    ApiToken.objects.filter(pk=token.pk).delete()  # its conversations stay, without its name
    history = turn_history(conversation_id=start.conversation_id, after_id=None)[0]
    assert history[0].content.startswith("[Sent by a chat client as an earlier message")

    first = Message.objects.filter(origin=Origin.CLIENT, role="user").get()
    with pytest.raises(ValidationFailed, match="chat client sent as this chat's history"):
        turn_begin(
            conversation_id=start.conversation_id, text="x", rerun="edit", message_id=first.pk
        )


@pytest.mark.django_db(transaction=True)
def test_the_migration_relabels_the_history_v1_kept_as_imported():
    before = [("agent", "0008_conversation_api_token")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    apps = executor.loader.project_state(before).apps
    old_conversation = apps.get_model("agent", "Conversation")
    old_message = apps.get_model("agent", "Message")
    for origin in ("api", "import"):  # a /v1 chat begun elsewhere; a backup's conversation
        kept = old_conversation.objects.create(title=origin, origin=origin)
        old_message.objects.create(conversation=kept, role="user", content="hi", origin="import")
        old_message.objects.create(conversation=kept, role="user", content="more", origin="live")

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    rows = Message.objects.order_by("conversation__title", "id")
    assert list(rows.values_list("conversation__title", "origin")) == [
        ("api", "client"),
        ("api", "live"),
        ("import", "import"),
        ("import", "live"),
    ]
