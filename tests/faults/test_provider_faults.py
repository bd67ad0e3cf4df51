"""The model server fails mid-turn: it hangs up mid-answer, stalls past the
read timeout, answers 429, 500 or an empty 200, or sends tool arguments that are not JSON.

Each failure ends the turn with a saved reply in status ``error`` (its code and reason set), one
``error`` event saying what happened, the request it reserved counted in the day's budget, and
nothing half-written: no task from a half-received tool call, no reply left streaming, the
conversation free for the next turn. Driven through the runner against the real fake server
(tests/agent/fake_openai.py), as tests/agent/test_runner.py does.
"""

from __future__ import annotations

import dataclasses
import json
import time
from typing import Any

import pytest

from agent.models import Conversation, Message
from talorys.owner.models import UsageDay
from talorys.workspace.models import Task
from tests.agent.fake_openai import (
    Reply,
    Stall,
    chunk,
    error,
    events,
    text,
    tool_calls,
)
from tests.agent.test_runner import TURN_DATABASE, kinds, reply_of, turn, use_fake
from tests.waiting import HANG_SECONDS

pytestmark = TURN_DATABASE  # a turn's trips see committed rows only

# A half-received call: the name and the start of its arguments, then the server is gone.
HALF_A_TOOL_CALL = chunk(
    {
        "tool_calls": [
            {
                "index": 0,
                "id": "call_1",
                "type": "function",
                "function": {"name": "create_task", "arguments": '{"title": "Half'},
            }
        ]
    }
)


def assert_failed_cleanly(
    received: list[dict[str, Any]], code: str, *, requests: int = 1
) -> Message:
    """The turn's end: an error event, then done; the reply saved as the error; budget counted;
    nothing left streaming or claimed. Returns the saved reply."""
    assert kinds(received)[-2:] == ["error", "done"], received
    problem, done = received[-2], received[-1]
    assert problem["code"] == code, problem
    assert done["status"] == "error"
    reply = reply_of(received)
    assert (reply.status, reply.error_code) == ("error", code)
    assert reply.error_message == problem["message"] != ""
    assert not Message.objects.filter(status=Message.Status.STREAMING).exists()
    assert Conversation.objects.get(pk=done["conversation_id"]).turn_id == ""
    # Every provider call reserved its request first; a failed one is not given back.
    assert UsageDay.objects.get().ai_requests == requests
    return reply


@pytest.mark.parametrize(
    ("reply", "code", "says"),
    [
        pytest.param(
            error(429, "Slow down", **{"Retry-After": "7"}),
            "PROVIDER_RATE_LIMITED",
            "rate limiting requests: Slow down. Try again in 7 s.",
            id="429",
        ),
        pytest.param(
            error(500, "Model crashed"),
            "PROVIDER_BAD_RESPONSE",
            "answered 500: Model crashed",
            id="500",
        ),
        pytest.param(
            Reply(parts=[]),
            "PROVIDER_BAD_RESPONSE",
            "answered 200 without any completion",
            id="empty-200-stream",
        ),
        pytest.param(
            Reply(parts=[], content_type="application/json"),
            "PROVIDER_BAD_RESPONSE",
            "malformed JSON",
            id="empty-200-json",
        ),
        pytest.param(
            events(drop_after=0), "PROVIDER_BAD_RESPONSE", "dropped the answer", id="drop-at-once"
        ),
    ],
)
def test_a_failed_answer_is_a_saved_error_reply(db, fake_openai, reply, code, says):
    use_fake(fake_openai)
    fake_openai.script(reply)

    received = turn(text="Hello")

    assert kinds(received) == ["title", "start", "error", "done"]
    saved = assert_failed_cleanly(received, code)
    assert says in saved.error_message
    assert saved.content == ""
    assert len(fake_openai.requests) == 1  # no retry


def test_a_stream_dropped_mid_answer_keeps_what_arrived(db, fake_openai):
    use_fake(fake_openai)
    fake_openai.script(
        events(
            chunk({"role": "assistant", "content": "The first "}),
            chunk({"content": "half, and"}),
            chunk({"content": " never the rest."}),
            drop_after=2,
        )
    )

    received = turn(text="Tell me")

    saved = assert_failed_cleanly(received, "PROVIDER_BAD_RESPONSE")
    assert "dropped the answer" in saved.error_message
    assert saved.content == "The first half, and"
    assert received[-1]["html"] == "<p>The first half, and</p>\n"


def test_a_stream_dropped_inside_a_tool_call_runs_nothing(db, fake_openai):
    use_fake(fake_openai)
    fake_openai.script(
        events(chunk({"content": "Adding it."}), HALF_A_TOOL_CALL, drop_after=2),
        text("Added."),  # never asked for
    )

    received = turn(text="Add a task Half a plan")

    saved = assert_failed_cleanly(received, "PROVIDER_BAD_RESPONSE")
    assert "tool" not in kinds(received)
    assert not Task.objects.exists()
    assert (saved.content, saved.tool_activity) == ("Adding it.", [])
    assert len(fake_openai.requests) == 1


def test_a_dropped_step_after_a_tool_ran_keeps_its_effect_and_counts_both(db, fake_openai):
    use_fake(fake_openai)
    fake_openai.script(
        tool_calls(("create_task", json.dumps({"title": "Kept"}))),
        events(chunk({"content": "Done, and"}), HALF_A_TOOL_CALL, drop_after=2),
    )

    received = turn(text="Add a task Kept")

    saved = assert_failed_cleanly(received, "PROVIDER_BAD_RESPONSE", requests=2)
    # The finished call stays done (and listed under the reply); the half-received one never ran.
    assert list(Task.objects.values_list("title", flat=True)) == ["Kept"]
    assert [(a["tool"], a["status"]) for a in saved.tool_activity] == [("create_task", "ok")]


def test_a_stall_past_the_read_timeout_ends_the_turn(db, fake_openai, monkeypatch):
    # The client's read timeout is 120 s and no setting names it: shortened for this turn only,
    # where the runner reads its provider configuration.
    from agent.runner import inputs

    chosen = inputs.provider_config
    monkeypatch.setattr(
        inputs,
        "provider_config",
        lambda owner: dataclasses.replace(chosen(owner), read_timeout=0.4),
    )
    use_fake(fake_openai)
    fake_openai.script(events(chunk({"content": "Thinking"}), Stall(10), chunk({"content": "..."})))
    started = time.monotonic()

    received = turn(text="Hello")

    assert time.monotonic() - started < 5
    saved = assert_failed_cleanly(received, "PROVIDER_TIMEOUT")
    assert "went quiet for more than 0.4 s" in saved.error_message
    assert saved.content == "Thinking"
    assert fake_openai.disconnected.wait(HANG_SECONDS)  # the stalled request was hung up on


def test_tool_arguments_that_are_not_json_run_nothing_and_the_model_hears_why(db, fake_openai):
    use_fake(fake_openai)
    fake_openai.script(
        tool_calls(("create_task", '{"title": "Milk", "priority": }')),
        text("Sorry, I could not add it."),
    )

    received = turn(text="Add a task Milk")

    # Not a turn failure: the call is refused, the model told, and it answers in words.
    assert received[-1]["status"] == "complete"
    assert not Task.objects.exists()
    reply = reply_of(received)
    assert [(a["tool"], a["status"]) for a in reply.tool_activity] == [("create_task", "error")]
    second = fake_openai.requests[1]["messages"]
    garbled, result = second[-2], second[-1]
    assert garbled["tool_calls"][0]["function"]["arguments"] == "{}"
    assert json.loads(result["content"])["error"]["code"] == "INVALID_ARGUMENTS"
    assert "must be a JSON object" in result["content"]
    # Both steps and the title's JSON-mode request were reserved.
    spent = len(fake_openai.requests) + len(fake_openai.json_requests)
    assert UsageDay.objects.get().ai_requests == spent == 3
