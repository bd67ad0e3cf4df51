"""/v1 refuses before it writes (agent/completions/admission.py): a request refused for the
day's budget, for a history over the bounds or for its token's new conversations of the day is
answered in OpenAI's shape and leaves no conversation, message or usage behind, whatever its
token's scope. And the history a client sends reaches the model as that client's, not as a
backup's. The official ``openai`` client against a live daphne on the test database."""

from __future__ import annotations

import datetime as dt
from typing import Any

import openai
import pytest
from django.utils import timezone

from agent.completions.admission import (
    CONVERSATIONS_PER_TOKEN_DAY,
    HISTORY_CHARS_MAX,
    HISTORY_MESSAGES_MAX,
    NewConversationsSpent,
    completion_admit,
    completion_claim,
)
from agent.completions.schemas import CompletionMessage
from agent.context import IMPORTED_FRAME
from agent.models import Conversation, Message
from talorys.accounts.models import ApiToken
from talorys.accounts.services import api_token_create
from talorys.owner.models import UsageDay
from tests.agent.fake_openai import text
from tests.agent.test_openai_endpoint import client
from tests.agent.test_runner import use_fake
from tests.automations.conftest import in_threads

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]


def made_up(count: int, chars: int = 40) -> list[dict[str, str]]:
    """A chat of ``count`` earlier messages no conversation holds, then the user's question."""
    said = [
        {"role": ("user", "assistant")[i % 2], "content": f"{i:04d} " + "x" * chars}
        for i in range(count)
    ]
    return [*said, {"role": "user", "content": "and now?"}]


def written() -> tuple[int, int, int, int]:
    """Everything a request could have written: conversations, messages, usage days, requests."""
    requests = sum(UsageDay.objects.values_list("ai_requests", flat=True))
    return (
        Conversation.objects.count(),
        Message.objects.count(),
        UsageDay.objects.count(),
        requests,
    )


def ask(ai: openai.OpenAI, messages: list[dict[str, str]], *, stream: bool = False) -> Any:
    answer = ai.chat.completions.create(model="talorys", messages=messages, stream=stream)  # type: ignore[call-overload]
    return list(answer) if stream else answer


def test_a_spent_budget_refuses_a_big_made_up_history_before_keeping_any_of_it(
    live_server_url, owner, fake_openai
):
    ai = client(live_server_url, owner, scope=ApiToken.Scope.READ)
    use_fake(fake_openai, daily_ai_requests=0)
    history = made_up(HISTORY_MESSAGES_MAX - 1, chars=1000)
    before = written()

    for stream in (False, True):
        with pytest.raises(openai.RateLimitError) as spent:
            ask(ai, history, stream=stream)
        assert spent.value.status_code == 429
        assert spent.value.code == "insufficient_quota"
        assert set(spent.value.body) == {"message", "type", "param", "code"}  # type: ignore[arg-type]
    assert written() == before
    assert not fake_openai.requests


def test_a_made_up_history_over_the_bounds_is_a_400_that_keeps_nothing(live_server_url, owner):
    ai = client(live_server_url, owner, scope=ApiToken.Scope.READ)
    half = HISTORY_CHARS_MAX // 2 + 1
    too_long = [  # two messages, more characters than the bound together
        {"role": "user", "content": "a" * half},
        {"role": "assistant", "content": "b" * half},
        {"role": "user", "content": "and now?"},
    ]
    before = written()

    for history in (made_up(HISTORY_MESSAGES_MAX + 1), too_long):
        with pytest.raises(openai.BadRequestError) as refused:
            ask(ai, history)
        assert refused.value.code == "context_length_exceeded"
        assert refused.value.type == "invalid_request_error"  # type: ignore[attr-defined]
        assert "Start a new chat" in refused.value.message
    assert written() == before

    ask(ai, made_up(HISTORY_MESSAGES_MAX))  # the bound itself is kept
    conversation = Conversation.objects.get()
    assert conversation.messages.filter(origin="client").count() == HISTORY_MESSAGES_MAX


def _started_today(token: ApiToken, count: int) -> None:
    """``count`` conversations ``token``'s client started today, as /v1 makes them."""
    Conversation.objects.bulk_create(
        Conversation(title=f"Chat {n}", origin="api", api_token=token) for n in range(count)
    )


@pytest.mark.parametrize("scope", [ApiToken.Scope.READ, ApiToken.Scope.WRITE])
def test_a_token_starts_a_bounded_number_of_conversations_a_day(live_server_url, owner, scope):
    ai = client(live_server_url, owner, scope=scope)
    token = ApiToken.objects.get()
    chat = [{"role": "user", "content": "hello"}]
    reply = ask(ai, chat).choices[0].message.content  # a real one, counted
    _started_today(token, CONVERSATIONS_PER_TOKEN_DAY - 1)
    Conversation.objects.filter(title="Chat 0").update(deleted_at=timezone.now())  # binned: counts
    before = written()

    for refused_chat in ([{"role": "user", "content": "a new chat"}], made_up(10)):
        with pytest.raises(openai.RateLimitError) as capped:
            ask(ai, refused_chat)
        assert capped.value.code == "rate_limit_exceeded"
        assert capped.value.type == "rate_limit_error"  # type: ignore[attr-defined]
        assert int(capped.value.response.headers["Retry-After"]) > 0
        assert f"{CONVERSATIONS_PER_TOKEN_DAY} conversations today" in capped.value.message
    assert written() == before

    # The chat resent continues its conversation: not a new one.
    again = [*chat, {"role": "assistant", "content": reply}, {"role": "user", "content": "hi"}]
    ask(ai, again)
    assert Conversation.objects.count() == before[0]
    # Another token counts its own; and yesterday's do not count today.
    ask(client(live_server_url, owner, scope=scope), [{"role": "user", "content": "other"}])
    yesterday = timezone.now() - dt.timedelta(days=2)
    Conversation.objects.filter(api_token=token).update(created_at=yesterday)
    ask(ai, [{"role": "user", "content": "a new day"}])
    assert Conversation.objects.count() == before[0] + 2


def test_two_new_chats_at_once_cannot_both_take_the_last_conversation_of_the_day(owner):
    token, _raw = api_token_create(user=owner, name="Open WebUI", scope=ApiToken.Scope.READ)
    _started_today(token, CONVERSATIONS_PER_TOKEN_DAY - 1)
    admitted = [  # both pass the checks before the claim, reading the same count
        completion_admit(messages=[CompletionMessage(role="user", content=t)], token=token)
        for t in ("first", "second")
    ]

    def claim(index: int) -> object:
        try:
            return completion_claim(admission=admitted[index], token=token)
        except NewConversationsSpent as refused:
            return refused

    outcomes = in_threads(lambda: claim(0), lambda: claim(1))
    assert sorted(type(o).__name__ for o in outcomes) == ["NewConversationsSpent", "TurnStart"]
    assert Conversation.objects.filter(api_token=token).count() == CONVERSATIONS_PER_TOKEN_DAY
    assert Message.objects.count() == 2  # the winner's question and reply, nothing of the other


def test_a_clients_history_reaches_the_model_as_that_clients_not_as_a_backups(
    live_server_url, owner, fake_openai
):
    _token, raw = api_token_create(user=owner, name="Open WebUI", scope=ApiToken.Scope.WRITE)
    ai = openai.OpenAI(base_url=f"{live_server_url}/v1", api_key=raw, max_retries=0, timeout=30)
    use_fake(fake_openai)
    fake_openai.script(text("You asked me to call mum."))
    history = [
        {"role": "user", "content": "remind me to call mum"},
        {"role": "assistant", "content": "Done (another model)."},
        {"role": "user", "content": "what did I ask?"},
    ]
    ask(ai, history)

    sent = [m["content"] for m in fake_openai.requests[0]["messages"]]
    earlier = [c for c in sent if "remind me to call mum" in c or "another model" in c]
    assert len(earlier) == 2
    for content in earlier:
        assert content.startswith("[Sent by the chat client using the API token “Open WebUI”")
    assert not any(IMPORTED_FRAME.strip() in c for c in sent)
    assert "what did I ask?" in sent[-1] and not sent[-1].startswith("[")
