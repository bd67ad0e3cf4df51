"""/v1 as the official ``openai`` client speaks to it, against a live daphne on the test database,
with the demo model (nothing configured)."""

from __future__ import annotations

from typing import Any

import httpx
import openai
import pytest

from agent.models import Conversation, Message
from approvals.models import PendingAction
from talorys.accounts.models import ApiToken
from talorys.accounts.services import api_token_create
from talorys.workspace.models import Task
from tests.agent.fake_openai import Stall, chunk, events
from tests.agent.test_runner import use_fake
from tests.conftest import OWNER_PASSWORD

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]

SYSTEM = {"role": "system", "content": "You are a helpful assistant."}


def client(url: str, owner: Any, scope: str = ApiToken.Scope.WRITE) -> openai.OpenAI:
    _token, raw = api_token_create(user=owner, name=f"client {scope}", scope=scope)
    # No retries: a retried turn would be a second turn, and hide what the first answered.
    return openai.OpenAI(base_url=f"{url}/v1", api_key=raw, max_retries=0, timeout=30)


def streamed(ai: openai.OpenAI, messages: list[dict[str, str]]) -> tuple[str, list[Any]]:
    chunks = list(ai.chat.completions.create(model="talorys", messages=messages, stream=True))
    content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    return content, chunks


def test_a_streamed_reply_adds_a_task_and_the_next_request_continues_its_conversation(
    live_server_url, owner
):
    ai = client(live_server_url, owner)
    first = [SYSTEM, {"role": "user", "content": "add a task to buy oat milk"}]
    content, chunks = streamed(ai, first)

    assert "› Added the task “Buy oat milk”" in content
    assert {c.object for c in chunks} == {"chat.completion.chunk"}
    assert len({c.id for c in chunks}) == 1 and chunks[0].model == "talorys"
    assert chunks[0].choices[0].delta.role == "assistant"
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert Task.objects.filter(title="Buy oat milk").count() == 1
    conversation = Conversation.objects.get()
    assert conversation.origin == "api"

    # The client resends the whole chat, its own system prompt and the reply as it showed it.
    second = [
        *first,
        {"role": "assistant", "content": content},
        {"role": "user", "content": "add a task to call the bank"},
    ]
    answer = ai.chat.completions.create(model="talorys", messages=second)
    assert answer.object == "chat.completion"
    assert "› Added the task “Call the bank”" in (answer.choices[0].message.content or "")
    assert Conversation.objects.get().pk == conversation.pk  # one conversation
    shown = list(Message.objects.order_by("id").values_list("role", "content"))
    assert [role for role, _ in shown] == ["user", "assistant", "user", "assistant"]
    assert shown[0][1] == "add a task to buy oat milk"
    assert shown[2][1] == "add a task to call the bank"
    assert "You are a helpful assistant." not in str(
        shown
    )  # the client's system prompt is not kept


def test_a_chat_begun_elsewhere_is_kept_once_and_then_matched(live_server_url, owner):
    ai = client(live_server_url, owner)
    elsewhere = [
        {"role": "user", "content": "hello there"},
        {"role": "assistant", "content": "Hi! (another model said this)"},
        {"role": "user", "content": "add a task to water the plants"},
    ]
    reply = ai.chat.completions.create(model="talorys", messages=elsewhere)
    text = reply.choices[0].message.content or ""
    again = [*elsewhere, {"role": "assistant", "content": text}]
    ai.chat.completions.create(
        model="talorys", messages=[*again, {"role": "user", "content": "list my tasks"}]
    )

    conversation = Conversation.objects.get()
    rows = list(conversation.messages.order_by("id").values_list("role", "origin"))
    assert rows == [
        ("user", "client"),
        ("assistant", "client"),
        ("user", "live"),
        ("assistant", "live"),
        ("user", "live"),
        ("assistant", "live"),
    ]


def test_a_destructive_request_waits_for_approval_in_talorys(live_server_url, owner):
    ai = client(live_server_url, owner)
    streamed(ai, [{"role": "user", "content": "add a task to buy oat milk"}])
    content, _ = streamed(ai, [{"role": "user", "content": "delete the task buy oat milk"}])

    assert "approve it in Talorys: http://" in content and "/approvals/" in content
    (action,) = PendingAction.objects.filter(status="pending")
    assert action.proposed_by == "the /v1 client “client write”"
    assert Task.objects.filter(title="Buy oat milk").exists()  # nothing deleted


def test_a_read_token_may_chat_but_its_turn_cannot_create_a_task(live_server_url, owner):
    ai = client(live_server_url, owner, scope=ApiToken.Scope.READ)
    content, _ = streamed(ai, [{"role": "user", "content": "add a task to buy oat milk"}])

    assert "can't use the create_task tool" in content
    assert not Task.objects.exists()


def test_models_and_the_openai_errors(live_server_url, owner):
    ai = client(live_server_url, owner)
    assert [model.id for model in ai.models.list()] == ["talorys"]
    assert ai.models.retrieve("talorys").id == "talorys"

    stranger = openai.OpenAI(base_url=f"{live_server_url}/v1", api_key="tal_nope", max_retries=0)
    with pytest.raises(openai.AuthenticationError) as refused:
        stranger.chat.completions.create(
            model="talorys", messages=[{"role": "user", "content": "hello"}]
        )
    assert refused.value.status_code == 401
    assert refused.value.code == "invalid_api_key"
    assert set(refused.value.body) == {"message", "type", "param", "code"}  # type: ignore[arg-type]

    with pytest.raises(openai.NotFoundError) as unknown:
        ai.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
    assert unknown.value.code == "model_not_found"
    with pytest.raises(openai.BadRequestError) as bad:
        ai.chat.completions.create(
            model="talorys", messages=[{"role": "assistant", "content": "x"}]
        )
    assert bad.value.status_code == 400
    assert not Conversation.objects.exists()


def test_the_owners_session_is_not_a_credential_here(live_server_url, owner):
    with httpx.Client(base_url=live_server_url, timeout=10) as browser:
        login = browser.post(
            "/api/auth/login", json={"username": "owner", "password": OWNER_PASSWORD}
        )
        assert login.status_code == 200
        assert browser.get("/api/conversations").status_code == 200
        answer = browser.get("/v1/models")
        missing = browser.get("/v1/embeddings")
    assert answer.status_code == 401
    assert answer.json()["error"]["type"] == "invalid_request_error"
    assert missing.status_code == 404 and set(missing.json()["error"]) == {
        "message",
        "type",
        "param",
        "code",
    }


def test_a_spent_budget_is_a_429_and_a_slow_model_still_streams(
    live_server_url, owner, fake_openai
):
    ai = client(live_server_url, owner)
    use_fake(fake_openai, daily_ai_requests=0)  # a model's budget (the demo spends none)
    with pytest.raises(openai.RateLimitError) as spent:
        ai.chat.completions.create(model="talorys", messages=[{"role": "user", "content": "hi"}])
    assert spent.value.code == "insufficient_quota"
    # Spent until the owner's day ends: a client that honours Retry-After waits that long.
    assert 0 < int(spent.value.response.headers["Retry-After"]) <= 24 * 3600 + 1

    use_fake(fake_openai, daily_ai_requests=100)
    fake_openai.script(events(chunk({"content": "Slow"}), Stall(0.5), chunk({"content": " one."})))
    content, chunks = streamed(ai, [{"role": "user", "content": "think"}])
    assert content == "Slow one." and chunks[-1].choices[0].finish_reason == "stop"
    # The refused request kept nothing (tests/agent/test_openai_refusals.py); the next one did.
    assert list(Message.objects.order_by("id").values_list("status", flat=True)) == [
        "complete",
        "complete",
    ]


def test_a_chat_already_answering_is_busy(live_server_url, owner, fake_openai):
    ai = client(live_server_url, owner)
    first = [{"role": "user", "content": "add a task to buy oat milk"}]
    content, _ = streamed(ai, first)
    use_fake(fake_openai)
    fake_openai.script(
        events(chunk({"content": "Still"}), Stall(1.5), chunk({"content": " here."}))
    )
    again = [*first, {"role": "assistant", "content": content}, {"role": "user", "content": "and?"}]
    body = {"model": "talorys", "stream": True, "messages": again}
    headers = {"Authorization": f"Bearer {ai.api_key}"}
    with httpx.stream(
        "POST", f"{live_server_url}/v1/chat/completions", json=body, headers=headers, timeout=30
    ) as running:
        assert running.status_code == 200
        lines = running.iter_lines()
        next(line for line in lines if "Still" in line)
        with pytest.raises(openai.ConflictError) as busy:
            ai.chat.completions.create(model="talorys", messages=again)
        assert busy.value.status_code == 409
        assert set(busy.value.body) == {"message", "type", "param", "code"}  # type: ignore[arg-type]
        assert [line for line in lines if line][-1] == "data: [DONE]"
    assert Conversation.objects.count() == 1
