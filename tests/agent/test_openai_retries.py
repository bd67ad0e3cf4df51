"""/v1 as real clients need it: every answer carries ``usage`` (and a stream its last chunk of
usage when ``stream_options.include_usage`` asks), a request sent again is answered with the
first answer instead of a second turn (agent/completions/replay.py), what Talorys does not do
is refused by name, and a failed request leaves no conversation behind. The official ``openai``
client against a live daphne on the test database."""

from __future__ import annotations

import datetime as dt
import threading
import time
from typing import Any

import openai
import pytest
from django.utils import timezone

from agent.models import CompletionRequest, Conversation, Message
from talorys.workspace.models import Task
from tests.agent import fake_openai as fake
from tests.agent.fake_openai import FakeOpenAI, Gate
from tests.agent.test_openai_endpoint import client
from tests.agent.test_runner import use_fake
from tests.automations.conftest import in_threads

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]

ADD = [{"role": "user", "content": "add a task to buy oat milk"}]


def ask(ai: openai.OpenAI, messages: list[dict[str, Any]], **extra: Any) -> Any:
    return ai.chat.completions.create(model="talorys", messages=messages, **extra)  # type: ignore[call-overload]


def test_answers_carry_usage_and_a_stream_its_usage_chunk_when_asked(live_server_url, owner):
    ai = client(live_server_url, owner)

    whole = ask(ai, [{"role": "user", "content": "hello"}])
    usage = whole.usage  # the demo reports none: estimated from the characters
    assert usage.prompt_tokens > 0 and usage.completion_tokens > 0
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens

    chunks = list(ask(ai, [{"role": "user", "content": "hi"}], stream=True))
    assert all(c.usage is None for c in chunks)  # not asked for: none, as OpenAI does

    asked = list(
        ask(
            ai,
            [{"role": "user", "content": "hey"}],
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    *said, last = asked
    assert last.choices == [] and last.usage is not None
    assert last.usage.total_tokens == last.usage.prompt_tokens + last.usage.completion_tokens > 0
    assert said[-1].choices[0].finish_reason == "stop"
    assert all(c.usage is None for c in said)


def test_usage_is_the_providers_when_it_reports_it(live_server_url, owner, fake_openai):
    ai = client(live_server_url, owner)
    use_fake(fake_openai)
    fake_openai.script(
        fake.tool_calls(("create_task", '{"title": "Buy oat milk"}'), usage=(20, 9)),
        fake.text("Added it.", usage=(12, 5)),
    )

    answer = ask(ai, ADD)

    assert "› Added the task “Buy oat milk”" in (answer.choices[0].message.content or "")
    # Both model steps of the turn, as the provider counted them.
    assert answer.usage.model_dump() == {
        "prompt_tokens": 32,
        "completion_tokens": 14,
        "total_tokens": 46,
        "completion_tokens_details": None,
        "prompt_tokens_details": None,
    }


def test_an_idempotency_key_replays_the_first_answer_and_refuses_another_body(
    live_server_url, owner
):
    ai = client(live_server_url, owner)
    key = {"Idempotency-Key": "llm-retry-1"}

    first = ask(ai, ADD, extra_headers=key)
    again = ask(ai, ADD, extra_headers=key)
    streamed = list(ask(ai, ADD, extra_headers={"Idempotency-Key": "llm-retry-2"}, stream=True))

    assert Task.objects.filter(title="Buy oat milk").count() == 2  # once per key, not per send
    assert again.model_dump() == first.model_dump()  # the same answer: id, content, usage
    assert "› Added the task “Buy oat milk”" in (first.choices[0].message.content or "")
    assert Message.objects.count() == 4
    replayed = list(ask(ai, ADD, extra_headers={"Idempotency-Key": "llm-retry-2"}, stream=True))
    text = "".join(c.choices[0].delta.content or "" for c in replayed if c.choices)
    assert text == "".join(c.choices[0].delta.content or "" for c in streamed if c.choices)
    assert {c.id for c in replayed} == {c.id for c in streamed}
    assert Message.objects.count() == 4  # nothing ran again

    with pytest.raises(openai.UnprocessableEntityError) as reused:
        ask(ai, [{"role": "user", "content": "add a task to call the bank"}], extra_headers=key)
    assert reused.value.code == "idempotency_key_reused"
    with pytest.raises(openai.BadRequestError):
        ask(ai, ADD, extra_headers={"Idempotency-Key": "x" * 256})
    assert not Task.objects.filter(title="Call the bank").exists()
    assert Message.objects.count() == 4


def test_the_same_body_within_the_window_replays_and_after_it_runs_again(live_server_url, owner):
    ai = client(live_server_url, owner)

    first = ask(ai, ADD)
    again = ask(ai, ADD)  # no key: the same token and body within TALORYS_V1_REPLAY_SECONDS

    assert again.choices[0].message.content == first.choices[0].message.content
    assert again.id == first.id
    assert Message.objects.count() == 2
    other = client(live_server_url, owner)  # another token's same body is its own request
    ask(other, ADD)
    assert Message.objects.count() == 4

    # The window counts from the reply's end (replay.py).
    Message.objects.update(updated_at=timezone.now() - dt.timedelta(seconds=61))
    ask(ai, ADD)
    assert Message.objects.count() == 6  # past the window: a new request


def test_two_identical_requests_at_once_run_the_turn_once(
    live_server_url, owner, fake_openai: FakeOpenAI
):
    ai = client(live_server_url, owner)
    use_fake(fake_openai)
    gate = Gate()
    held = fake.tool_calls(("create_task", '{"title": "Buy oat milk"}'))
    fake_openai.script(fake.Reply(parts=[gate, *held.parts]), fake.text("Added it."))

    def open_gate_once_asked() -> None:
        deadline = time.monotonic() + 30
        while not fake_openai.requests and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(1.0)  # the other request has found the first's row and waits for its reply
        gate.opened.set()

    opener = threading.Thread(target=open_gate_once_asked)
    opener.start()
    answers = in_threads(lambda: ask(ai, ADD), lambda: ask(ai, ADD))
    opener.join()

    assert answers[0].model_dump() == answers[1].model_dump()
    assert Task.objects.filter(title="Buy oat milk").count() == 1
    assert Message.objects.count() == 2
    assert CompletionRequest.objects.count() == 1


def test_unsupported_parameters_are_refused_by_name(live_server_url, owner):
    ai = client(live_server_url, owner)
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
    tool = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}
    refused = {
        "n": {"n": 2},
        "tools": {"tools": [tool]},
        "response_format": {"response_format": {"type": "json_object"}},
        "messages[0].content[1]": {
            "messages": [{"role": "user", "content": [{"type": "text", "text": "what?"}, image]}]
        },
    }
    for param, extra in refused.items():
        with pytest.raises(openai.BadRequestError) as bad:
            ask(ai, extra.pop("messages", ADD), **extra)
        assert bad.value.param == param  # type: ignore[attr-defined]
        assert bad.value.code == "unsupported_parameter"
    assert not Conversation.objects.exists() and not CompletionRequest.objects.exists()

    fine = ask(ai, [{"role": "user", "content": "hello"}], n=1, response_format={"type": "text"})
    assert fine.choices[0].message.content


def test_a_failed_request_leaves_no_conversation_and_its_retry_runs(
    live_server_url, owner, fake_openai
):
    ai = client(live_server_url, owner)
    use_fake(fake_openai)
    fake_openai.script(fake.error(500, "model crashed"), fake.error(500, "model crashed"))
    hello = [{"role": "user", "content": "hello"}]

    for stream in (False, True):
        with pytest.raises(openai.APIStatusError) as failed:
            list(ask(ai, hello, stream=True)) if stream else ask(ai, hello)
        assert failed.value.status_code == 502
    assert not Conversation.objects.exists()
    assert not Message.objects.exists() and not CompletionRequest.objects.exists()

    fake_openai.script(fake.text("Hello again."))
    answer = ask(ai, hello)  # the same body within the window: run, not a replayed error
    assert answer.choices[0].message.content == "Hello again."
    assert Conversation.objects.count() == 1
