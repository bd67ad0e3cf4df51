"""The OpenAI-compatible client against a real local server speaking the streaming format."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from contextlib import aclosing
from typing import Any

import pytest

from talorys.lib.tools import Permission, Tool, ToolArgs
from talorys.owner.models import OwnerSettings
from talorys.owner.selectors import provider_config
from talorys.providers import provider_for
from talorys.providers.base import (
    ChatMessage,
    Finish,
    ProviderConfig,
    ProviderError,
    TextDelta,
    ToolCall,
    Usage,
)
from talorys.providers.openai_compat import OpenAICompatProvider
from tests.agent import fake_openai as fake
from tests.agent.fake_openai import FakeOpenAI, Stall, chunk, events, sse


class CreateTaskArgs(ToolArgs):
    title: str


class CreateTask(Tool):  # not registered: only its spec is needed
    name = "create_task"
    description = "Create a task for the owner."
    args = CreateTaskArgs
    permission = Permission.WRITE


HELLO = [
    ChatMessage(role="system", content="You are Talorys."),
    ChatMessage(role="user", content="Hi"),
]


@pytest.fixture
async def client(fake_openai: FakeOpenAI):
    provider = OpenAICompatProvider(
        ProviderConfig(base_url=fake_openai.base_url, model="fake-model", api_key="sk-test")
    )
    yield provider
    await provider.aclose()


async def collect(provider: OpenAICompatProvider, **kwargs: Any) -> list[Any]:
    arguments = {"messages": HELLO, "tools": [], "max_tokens": 256} | kwargs
    return [event async for event in provider.stream(**arguments)]


def text_of(received: list[Any]) -> str:
    return "".join(event.text for event in received if isinstance(event, TextDelta))


async def expect_error(provider: OpenAICompatProvider, kind: str, **kwargs: Any) -> ProviderError:
    with pytest.raises(ProviderError) as raised:
        await collect(provider, **kwargs)
    assert raised.value.kind == kind, raised.value.message
    return raised.value


# What is sent


async def test_streams_text_then_usage_then_finish(client, fake_openai):
    fake_openai.script(fake.text("Hel", "lo", usage=(12, 5)))

    received = await collect(client, max_tokens=300)

    # The usage arrives in its own chunk with an empty ``choices`` list.
    assert received == [TextDelta("Hel"), TextDelta("lo"), Usage(12, 5), Finish("stop")]
    body = fake_openai.requests[0]
    assert body["model"] == "fake-model"
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["max_tokens"] == 300
    assert body["messages"] == [
        {"role": "system", "content": "You are Talorys."},
        {"role": "user", "content": "Hi"},
    ]
    assert "tools" not in body and "tool_choice" not in body
    assert fake_openai.headers[0]["Authorization"] == "Bearer sk-test"


async def test_sends_no_authorization_without_a_key(fake_openai):
    fake_openai.script(fake.text("ok"))
    provider = OpenAICompatProvider(ProviderConfig(base_url=fake_openai.base_url, model="m"))
    await collect(provider)
    await provider.aclose()
    assert "Authorization" not in fake_openai.headers[0]


async def test_text_is_yielded_as_it_arrives(client, fake_openai):
    fake_openai.script(
        events(
            chunk({"content": "Hel"}), Stall(0.6), chunk({"content": "lo"}, finish_reason="stop")
        )
    )
    started = time.monotonic()
    arrivals = []
    async for event in client.stream(messages=HELLO, tools=[], max_tokens=50):
        arrivals.append((event, time.monotonic() - started))

    assert arrivals[0][0] == TextDelta("Hel")
    assert arrivals[0][1] < 0.5  # before the server's pause, not after the whole answer
    assert arrivals[-1][1] >= 0.6


async def test_tools_and_tool_history_are_sent_in_openai_format(client, fake_openai):
    fake_openai.script(fake.text("ok"))
    history = [
        *HELLO,
        ChatMessage(
            role="assistant",
            tool_calls=[
                ToolCall("call_1", "create_task", {"title": "Buy milk"}, '{"title": "Buy milk"}'),
                ToolCall("call_2", "create_task", None, '{"title": '),
            ],
        ),
        ChatMessage(role="tool", content='{"id": 4}', tool_call_id="call_1", name="create_task"),
        ChatMessage(
            role="tool", content="bad arguments", tool_call_id="call_2", name="create_task"
        ),
    ]

    await collect(client, messages=history, tools=[CreateTask.spec()])

    body = fake_openai.requests[0]
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "create_task",
                "description": "Create a task for the owner.",
                "parameters": CreateTaskArgs.model_json_schema(),
            },
        }
    ]
    assert body["tool_choice"] == "auto"
    assert body["messages"][2] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "create_task", "arguments": '{"title": "Buy milk"}'},
            },
            # Garbled arguments go back as an empty object so the server accepts the history.
            {
                "id": "call_2",
                "type": "function",
                "function": {"name": "create_task", "arguments": "{}"},
            },
        ],
    }
    assert body["messages"][3] == {"role": "tool", "tool_call_id": "call_1", "content": '{"id": 4}'}


async def test_tool_choice_none_is_sent(client, fake_openai):
    fake_openai.script(fake.text("ok"))
    await collect(client, tools=[CreateTask.spec()], tool_choice="none")
    assert fake_openai.requests[0]["tool_choice"] == "none"


# Tool calls


@pytest.mark.parametrize("repeat", [False, True], ids=["id-once", "id-and-name-repeated"])
async def test_tool_call_split_across_chunks_is_assembled(client, fake_openai, repeat):
    arguments = '{"title": "Buy milk", "priority": 2}'
    fake_openai.script(fake.tool_calls(("create_task", arguments), split=5, repeat=repeat))

    received = await collect(client, tools=[CreateTask.spec()])

    assert received == [
        ToolCall("call_1", "create_task", {"title": "Buy milk", "priority": 2}, arguments),
        Usage(20, 9),
        Finish("tool_calls"),
    ]


async def test_parallel_tool_calls_are_kept_apart_by_index(client, fake_openai):
    def piece(index: int, arguments: str, name: str | None = None) -> dict[str, Any]:
        call: dict[str, Any] = {"index": index, "function": {"arguments": arguments}}
        if name:
            call |= {"id": f"call_{index}", "type": "function"}
            call["function"]["name"] = name
        return chunk({"tool_calls": [call]})

    fake_openai.script(
        events(
            piece(0, '{"title": ', "create_task"),
            piece(1, '{"title": ', "create_task"),
            piece(1, '"Call Ana"}'),
            piece(0, '"Buy milk"}'),
            chunk(finish_reason="tool_calls"),
        )
    )

    calls = [event for event in await collect(client) if isinstance(event, ToolCall)]

    assert [(call.id, call.arguments) for call in calls] == [
        ("call_0", {"title": "Buy milk"}),
        ("call_1", {"title": "Call Ana"}),
    ]


async def test_legacy_function_call_becomes_a_tool_call(client, fake_openai):
    fake_openai.script(fake.tool_calls(("create_task", '{"title": "Buy milk"}'), legacy=True))

    received = await collect(client)

    call = received[0]
    assert isinstance(call, ToolCall)
    assert (call.name, call.arguments) == ("create_task", {"title": "Buy milk"})
    assert call.id  # servers send none for the legacy field; the history needs one
    assert received[-1] == Finish("tool_calls")


async def test_legacy_function_call_beside_tool_calls_is_not_a_second_call(client, fake_openai):
    function = {"name": "create_task", "arguments": '{"title": "Buy milk"}'}
    fake_openai.script(
        events(
            chunk(
                {
                    "tool_calls": [
                        {"index": 0, "id": "call_9", "type": "function", "function": function}
                    ],
                    "function_call": function,
                },
                finish_reason="tool_calls",
            )
        )
    )

    calls = [event for event in await collect(client) if isinstance(event, ToolCall)]

    assert calls == [
        ToolCall("call_9", "create_task", {"title": "Buy milk"}, function["arguments"])
    ]


async def test_arguments_that_are_not_json_are_kept_raw(client, fake_openai):
    fake_openai.script(fake.tool_calls(("create_task", '{"title": "Buy mi')))

    call = (await collect(client))[0]

    assert call == ToolCall("call_1", "create_task", None, '{"title": "Buy mi')


@pytest.mark.parametrize(
    ("raw", "parsed"),
    [
        ("", {}),  # a tool without arguments
        ('{"title": "A"}{"title": "A"}', {"title": "A"}),  # the whole object sent again at the end
        ('["A"]', None),  # JSON, but not an object
    ],
)
async def test_argument_quirks(client, fake_openai, raw, parsed):
    fake_openai.script(fake.tool_calls(("create_task", raw)))
    call = (await collect(client))[0]
    assert (call.arguments, call.raw_arguments) == (parsed, raw)


# What real servers send besides the format


async def test_comments_empty_deltas_bare_data_and_crlf_are_tolerated(client, fake_openai):
    fake_openai.script(
        events(
            b": ping\n\n",
            chunk({"role": "assistant", "content": ""}),
            chunk({"content": None}),
            sse(chunk({"content": "Hel"}), space=False),
            b": ping\r\n\r\n",
            sse(chunk({"content": "lo "}), newline="\r\n"),
            sse(chunk({"content": "world"}, finish_reason="stop"), space=False, newline="\r\n"),
            done=True,
        )
    )

    received = await collect(client)

    assert text_of(received) == "Hello world"
    assert all(event.text for event in received if isinstance(event, TextDelta))
    assert received[-1] == Finish("stop")


async def test_missing_usage_is_fine(client, fake_openai):
    fake_openai.script(fake.text("Hi there", usage=None))

    received = await collect(client)

    assert received == [TextDelta("Hi there"), Finish("stop")]


async def test_stream_without_done_but_with_a_finish_reason_is_complete(client, fake_openai):
    fake_openai.script(fake.text("Hi", done=False))
    assert (await collect(client))[-1] == Finish("stop")


async def test_a_plain_json_completion_is_accepted(client, fake_openai):
    completion = {
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "Hi"}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1},
    }
    fake_openai.script(
        fake.Reply([json.dumps(completion).encode()], content_type="application/json")
    )

    assert await collect(client) == [TextDelta("Hi"), Usage(3, 1), Finish("stop")]


# Errors: each a clear kind, one request, no retry


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (401, "auth"),
        (403, "auth"),
        (429, "rate_limited"),
        (500, "bad_response"),
        (404, "bad_response"),
    ],
)
async def test_http_errors_have_a_kind_and_are_not_retried(client, fake_openai, status, kind):
    fake_openai.script(fake.error(status, "model says no"))

    problem = await expect_error(client, kind)

    assert "model says no" in problem.message
    assert problem.code == f"PROVIDER_{kind.upper()}"
    assert len(fake_openai.requests) == 1


async def test_rate_limit_mentions_when_to_try_again(client, fake_openai):
    fake_openai.script(fake.error(429, "slow down", **{"Retry-After": "20"}))
    problem = await expect_error(client, "rate_limited")
    assert "20 s" in problem.message


async def test_unreachable_server():
    with socket.socket() as probe:  # a port with nobody listening
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    provider = OpenAICompatProvider(
        ProviderConfig(base_url=f"http://127.0.0.1:{port}/v1", model="m", connect_timeout=2)
    )
    problem = await expect_error(provider, "unreachable")
    await provider.aclose()
    assert problem.code == "PROVIDER_UNREACHABLE"


@pytest.mark.parametrize(
    "reply",
    [
        pytest.param(
            events(chunk({"content": "Hi"}), b"data: {not json\n\n"), id="malformed-chunk"
        ),
        pytest.param(events(b"data: [1, 2]\n\n"), id="chunk-not-an-object"),
        pytest.param(events(done=False), id="empty-200"),
        pytest.param(events(), id="only-done"),
        pytest.param(events(chunk({"content": "Hi"}), done=False), id="no-done-no-finish"),
        pytest.param(
            events(chunk({"content": "Hi"}), {"error": {"message": "model crashed"}}),
            id="error-mid-stream",
        ),
        pytest.param(fake.Reply([b"<html>login</html>"], content_type="text/html"), id="html-page"),
    ],
)
async def test_bad_responses(client, fake_openai, reply):
    fake_openai.script(reply)
    await expect_error(client, "bad_response")
    assert len(fake_openai.requests) == 1


async def test_error_mid_stream_shows_the_servers_message(client, fake_openai):
    fake_openai.script(events(chunk({"content": "Hi"}), {"error": {"message": "model crashed"}}))
    problem = await expect_error(client, "bad_response")
    assert "model crashed" in problem.message


async def test_a_stall_longer_than_the_read_timeout_is_a_timeout(fake_openai):
    fake_openai.script(events(chunk({"content": "Hel"}), Stall(5), chunk({"content": "lo"})))
    provider = OpenAICompatProvider(
        ProviderConfig(base_url=fake_openai.base_url, model="m", read_timeout=0.3)
    )
    started = time.monotonic()

    problem = await expect_error(provider, "timeout")

    await provider.aclose()
    assert time.monotonic() - started < 2
    assert "0.3 s" in problem.message


# The connection is kept for the next step


async def test_steps_one_after_another_share_one_connection(client, fake_openai):
    fake_openai.script(fake.text("one"), fake.text("two"), fake.text("three"))

    said = [text_of(await collect(client)) for _ in range(3)]

    assert said == ["one", "two", "three"]
    assert fake_openai.connections == 1


async def test_a_server_that_keeps_talking_after_done_is_hung_up_on(client, fake_openai):
    fake_openai.script(
        events(chunk({"content": "Hello"}), chunk(finish_reason="stop"), fake.DONE, Stall(30))
    )
    started = time.monotonic()

    received = await collect(client)

    assert text_of(received) == "Hello"
    assert isinstance(received[-1], Finish)
    assert time.monotonic() - started < 5
    assert await asyncio.to_thread(fake_openai.disconnected.wait, 2)


# Abandoning a step hangs up on the server


async def test_cancelling_the_consumer_closes_the_response(client, fake_openai):
    fake_openai.script(events(chunk({"content": "Hel"}), Stall(30), chunk({"content": "lo"})))
    first_text = asyncio.Event()

    async def consume() -> None:
        async for event in client.stream(messages=HELLO, tools=[], max_tokens=50):
            if isinstance(event, TextDelta):
                first_text.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(first_text.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    assert await asyncio.to_thread(fake_openai.disconnected.wait, 2)


async def test_closing_the_stream_early_closes_the_response(client, fake_openai):
    fake_openai.script(events(chunk({"content": "Hel"}), Stall(30), chunk({"content": "lo"})))

    async with aclosing(client.stream(messages=HELLO, tools=[], max_tokens=50)) as stream:
        async for event in stream:
            assert event == TextDelta("Hel")
            break

    assert await asyncio.to_thread(fake_openai.disconnected.wait, 2)


# Configuration


@pytest.fixture
def env_model(settings):
    settings.TALORYS_MODEL_BASE_URL = "http://127.0.0.1:11434/v1"
    settings.TALORYS_MODEL = "llama3.1"
    settings.TALORYS_MODEL_API_KEY = "env-key"
    return settings


def test_environment_configures_the_model(env_model):
    config = provider_config(OwnerSettings())
    assert config == ProviderConfig(
        base_url="http://127.0.0.1:11434/v1", model="llama3.1", api_key="env-key"
    )
    assert isinstance(provider_for(config), OpenAICompatProvider)


def test_owner_settings_override_the_environment(env_model):
    row = OwnerSettings(model_name="qwen2.5")
    assert provider_config(row).model == "qwen2.5"
    assert provider_config(row).api_key == "env-key"  # same server, same key

    other = provider_config(
        OwnerSettings(model_base_url="https://openrouter.ai/api/v1", model_name="x/y")
    )
    assert (other.base_url, other.model) == ("https://openrouter.ai/api/v1", "x/y")
    assert other.api_key == ""  # the environment's key is never sent to another server


def test_no_model_configured_means_the_demo_provider(settings):
    settings.TALORYS_MODEL_BASE_URL = ""
    settings.TALORYS_MODEL = ""
    provider = provider_for(provider_config(OwnerSettings()))
    assert (provider.name, provider.is_demo) == ("demo", True)
