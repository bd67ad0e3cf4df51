"""The chat turn under hostile or unlucky conditions: an accepted cancel is obeyed, NUL
characters never reach the database, a save that fails still ends the turn, model output is
capped, the approval-outcome notes are counted in the context budget, and a model step
that never finishes ends at its deadline.

Synchronous tests drive the runner with ``async_to_sync``, so its ORM calls see the test's
transaction (tests/agent/test_runner.py).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import time
from typing import Any

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from django.db import connection
from django.test import override_settings
from django.utils import timezone

from agent import context, services
from agent.models import Conversation, Message
from agent.runner import run_turn
from approvals.models import PendingAction
from talorys.notifications.models import Notification
from talorys.workspace.models import Task
from tests.agent.fake_openai import Forever, Stall, chunk, events, sse, text, tool_calls
from tests.agent.test_runner import (
    TURN_DATABASE,
    conversation_with,
    kinds,
    reply_of,
    turn,
    use_fake,
)
from tests.waiting import HANG_SECONDS

pytestmark = TURN_DATABASE  # a turn's trips see committed rows only

# --- 9: an accepted cancel stops the turn --------------------------------------------------------


def _turn_cancelling_on_first_text(**kwargs: Any) -> tuple[list[dict[str, Any]], bool | None]:
    """Run a turn and ask to cancel it as soon as its first text arrives (from the owner's side:
    the same service the cancel endpoint and the socket call)."""

    async def scenario() -> tuple[list[dict[str, Any]], bool | None]:
        received: list[dict[str, Any]] = []
        answered = None
        async for event in run_turn(**kwargs):
            received.append(event)
            if event["type"] == "text" and answered is None:
                answered = await sync_to_async(services.turn_cancel)(
                    conversation_id=event["conversation_id"]
                )
        return received, answered

    return async_to_sync(scenario)()


def test_no_tool_call_starts_after_an_accepted_cancel(db, fake_openai):
    use_fake(fake_openai)
    fake_openai.script(
        # The cancel lands right after a lease poll, so the next rate-limited poll is 0.5 s away
        # while the tool call arrives at once: only a check before the call can stop it.
        events(
            Stall(0.6),
            chunk({"role": "assistant", "content": "On it. "}),
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "create_task", "arguments": '{"title": "x"}'},
                        }
                    ]
                }
            ),
            chunk(finish_reason="tool_calls"),
        ),
        text("Added the task."),
    )

    received, answered = _turn_cancelling_on_first_text(text="Add a task x")

    assert answered is True
    assert not Task.objects.exists()
    assert len(fake_openai.requests) == 1  # no model call after the cancel either
    assert "tool" not in kinds(received)
    usage = received[-1].pop("usage")
    assert received[-1] == {
        "type": "done",
        "conversation_id": received[-1]["conversation_id"],
        "message_id": received[-1]["message_id"],
        "status": "cancelled",
        "html": "<p>On it.</p>\n",
    }
    # The step reported no usage: estimated from what was sent and said (runner/events.py).
    assert usage["estimated"] is True and usage["completion_tokens"] == 6  # "On it. " + args
    assert usage["prompt_tokens"] > 100  # the system prompt and the owner's message
    reply = reply_of(received)
    assert (reply.status, reply.content) == ("cancelled", "On it. ")


def test_a_cancel_accepted_during_the_last_step_ends_the_reply_cancelled(db, fake_openai):
    use_fake(fake_openai)
    fake_openai.script(text("Hello ", "there."))

    received, answered = _turn_cancelling_on_first_text(text="Hi")

    assert answered is True
    assert received[-1]["status"] == "cancelled"
    assert reply_of(received).status == "cancelled"
    conversation = Conversation.objects.get(pk=received[-1]["conversation_id"])
    assert (conversation.turn_id, conversation.turn_cancel_requested) == ("", False)


def test_a_cancel_after_the_end_answers_false_and_changes_nothing(db, fake_openai):
    use_fake(fake_openai)
    fake_openai.script(text("Hello."))
    received = turn(text="Hi")
    assert services.turn_cancel(conversation_id=received[-1]["conversation_id"]) is False
    assert reply_of(received).status == "complete"


# --- 11: NUL characters, and a save that fails ---------------------------------------------------


def test_nul_from_the_model_never_reaches_the_database(needs_postgres, fake_openai):
    use_fake(fake_openai)
    arguments = json.dumps({"title": "Milk\u0000 and eggs", "details": "a\u0000b"})
    fake_openai.script(
        events(
            chunk({"role": "assistant", "content": "Adding\u0000 it."}),
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "call_\u00001",
                            "type": "function",
                            "function": {"name": "create_task\u0000", "arguments": arguments},
                        }
                    ]
                }
            ),
            chunk(finish_reason="tool_calls"),
        ),
        tool_calls(("notify_owner", json.dumps({"title": "Done\u0000", "body": "x\u0000y"}))),
        text("Done\u0000, ", "and\u0000 noted."),
    )

    received = turn(text="Add a task: milk and eggs")

    assert kinds(received)[-1] == "done"
    assert received[-1]["status"] == "complete", received
    reply = reply_of(received)
    assert reply.content == "Adding it.\n\nDone, and noted."
    assert "\u0000" not in json.dumps(reply.tool_activity)
    assert [a["status"] for a in reply.tool_activity] == ["ok", "ok"]
    task = Task.objects.get()
    assert (task.title, task.details) == ("Milk and eggs", "ab")
    assert Notification.objects.get().title == "Done"
    conversation = Conversation.objects.get(pk=received[-1]["conversation_id"])
    assert conversation.turn_id == ""


def test_a_nul_in_a_provider_error_is_saved_without_it(needs_postgres, fake_openai):
    use_fake(fake_openai)
    fake_openai.script(
        events(chunk({"content": "Part"}), b'data: {"error": "bad\\u0000 news"}\n\n')
    )
    received = turn(text="Hi")
    assert kinds(received)[-2:] == ["error", "done"]
    reply = reply_of(received)
    assert reply.status == "error"
    assert reply.content == "Part"
    assert Conversation.objects.get(pk=received[-1]["conversation_id"]).turn_id == ""


@pytest.fixture
def refuse_saving_poison(needs_postgres):
    """A database that refuses to save one reply text: a real save failure, not a patched one."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            CREATE FUNCTION refuse_poison() RETURNS trigger AS $$
            BEGIN
                IF NEW.content LIKE '%poison%' THEN
                    RAISE EXCEPTION 'refused by test trigger';
                END IF;
                RETURN NEW;
            END $$ LANGUAGE plpgsql;
            CREATE TRIGGER refuse_poison BEFORE UPDATE ON agent_message
                FOR EACH ROW EXECUTE FUNCTION refuse_poison();
            """
        )


def _turn_events(**kwargs: Any) -> list[dict[str, Any]]:
    received: list[dict[str, Any]] = []

    async def scenario() -> None:
        async for event in run_turn(**kwargs):
            received.append(event)

    try:
        async_to_sync(scenario)()
    except Exception as error:  # what the turn did before this fix: the stream just broke
        received.append({"type": "exception", "error": repr(error)})
    return received


def test_a_save_that_fails_ends_the_turn_with_a_saved_error(refuse_saving_poison, fake_openai):
    use_fake(fake_openai)
    fake_openai.script(text("Here is the poison you asked for."))

    received = _turn_events(text="Hi")

    assert kinds(received)[-2:] == ["error", "done"], received
    assert received[-2]["code"] == "INTERNAL"
    assert received[-1]["status"] == "error"
    reply = Message.objects.get(pk=received[-1]["message_id"])
    assert (reply.status, reply.error_code) == ("error", "INTERNAL")
    assert "could not be saved" in reply.error_message
    assert reply.content == received[-1]["html"] == ""
    # The conversation is free at once (not a 409 for the lease's minute).
    conversation = Conversation.objects.get(pk=received[-1]["conversation_id"])
    assert conversation.turn_id == ""
    fake_openai.script(text("Fine."))
    assert turn(conversation_id=conversation.pk, text="Again")[-1]["status"] == "complete"


def test_a_reply_left_streaming_is_closed_by_the_next_turn(db, fake_openai):
    use_fake(fake_openai)
    conversation = conversation_with(
        ("user", "Hi"), ("assistant", "Half a rep", Message.Status.STREAMING)
    )
    fake_openai.script(text("Hello."))
    turn(conversation_id=conversation.pk, text="Hello?")
    left = Message.objects.get(content="Half a rep")
    assert (left.status, left.error_code) == ("error", "INTERRUPTED")


# --- 15: model output is capped -------------------------------------------------------------------


@override_settings(TALORYS_MAX_REPLY_CHARS=5_000)
def test_a_reply_past_the_cap_ends_with_an_error_and_keeps_what_fits(db, fake_openai):
    use_fake(fake_openai)
    fake_openai.script(text(*["x" * 1_000] * 40))

    received = turn(text="Talk a lot")

    assert kinds(received)[-2:] == ["error", "done"]
    assert received[-2]["code"] == "PROVIDER_TOO_LONG"
    assert "5,000 characters" in received[-2]["message"]
    streamed = "".join(e["delta"] for e in received if e["type"] == "text")
    reply = reply_of(received)
    assert (reply.status, reply.error_code) == ("error", "PROVIDER_TOO_LONG")
    assert reply.content == streamed == "x" * 5_000


@override_settings(TALORYS_MAX_REPLY_CHARS=3_000)
def test_the_reply_cap_counts_every_step(db, fake_openai):
    use_fake(fake_openai)
    fake_openai.script(
        events(
            chunk({"content": "a" * 2_000}),
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "list_tasks", "arguments": "{}"},
                        }
                    ]
                }
            ),
            chunk(finish_reason="tool_calls"),
        ),
        text("b" * 2_000),
    )
    received = turn(text="Go")
    reply = reply_of(received)
    assert reply.error_code == "PROVIDER_TOO_LONG"
    assert len(reply.content) == 3_000
    assert reply.content.startswith("a" * 2_000 + "\n\n")


@override_settings(TALORYS_MAX_STEP_CHARS=3_000)
def test_tool_arguments_past_the_step_cap_run_nothing(db, fake_openai):
    use_fake(fake_openai)
    fake_openai.script(
        tool_calls(("create_task", json.dumps({"title": "t", "notes": "n" * 20_000})))
    )

    received = turn(text="Add a task t")

    assert received[-2]["code"] == "PROVIDER_TOO_LONG"
    assert "3,000 characters in one step" in received[-2]["message"]
    assert not Task.objects.exists()
    assert len(fake_openai.requests) == 1


@override_settings(TALORYS_MAX_STEP_CHARS=2_000)
def test_a_step_past_its_cap_keeps_its_text_up_to_the_cap(db, fake_openai):
    use_fake(fake_openai)
    fake_openai.script(text(*["y" * 700] * 10))
    received = turn(text="Talk")
    reply = reply_of(received)
    assert (reply.status, reply.error_code) == ("error", "PROVIDER_TOO_LONG")
    assert reply.content == "y" * 2_000


# --- 19: outcome notes are counted in the context budget ----------------------------------------


def test_outcome_notes_are_counted_in_the_history_budget(db, fake_openai):
    # No summary call: the day's budget leaves one request, the answer's.
    use_fake(fake_openai, max_context_tokens=3_000, daily_ai_requests=1)
    history: list[tuple[str, str]] = []
    for n in range(20):
        history += [
            ("user", f"Question {n} " + "q" * 390),
            ("assistant", f"Answer {n} " + "a" * 390),
        ]
    conversation = conversation_with(*history)
    old_replies = list(
        Message.objects.filter(conversation=conversation, role="assistant").order_by("id")
    )[:10]
    for reply in old_replies:
        PendingAction.objects.create(
            tool="delete_task",
            target_id=reply.pk,
            snapshot="x",
            summary=f"Delete the task {reply.pk} " + "s" * 470,
            status=PendingAction.Status.REJECTED,
            conversation_id=conversation.pk,
            message_id=reply.pk,
            expires_at=timezone.now() + dt.timedelta(hours=1),
        )
    fake_openai.script(text("Sure."))

    turn(conversation_id=conversation.pk, text="And now?")

    sent = fake_openai.requests[-1]["messages"]
    system, window = sent[0]["content"], sent[1:]
    assert system.count("[Approval outcome:") == 10
    used = context.estimate_tokens(system) + sum(
        context.estimate_tokens(m["content"]) for m in window
    )
    assert used <= 3_000 - context.HISTORY_RESERVE_TOKENS
    assert window[-1]["content"] == "And now?"


# --- every model step has a deadline, whatever the server sends ---------------------


def _turn_within(seconds: float, **kwargs: Any) -> list[dict[str, Any]]:
    """``turn``, failing instead of hanging when it does not end within ``seconds``."""

    async def scenario() -> list[dict[str, Any]]:
        async def collect() -> list[dict[str, Any]]:
            return [event async for event in run_turn(**kwargs)]

        return await asyncio.wait_for(collect(), seconds)

    return async_to_sync(scenario)()


@pytest.mark.parametrize(
    "forever",
    [Forever(b": keep-alive\n\n", every=0.05), Forever(sse(chunk({"content": "."})), every=0.05)],
    ids=["keep-alive-comments", "trickled-text"],
)
@override_settings(TALORYS_MODEL_STEP_DEADLINE=1.5)
def test_a_step_that_never_finishes_ends_at_its_deadline(db, fake_openai, forever):
    use_fake(fake_openai)
    fake_openai.script(events(chunk({"role": "assistant", "content": "Thinking"}), forever))
    started = time.monotonic()

    received = _turn_within(60, text="Think it over")

    assert time.monotonic() - started >= 1.5
    assert kinds(received)[-2:] == ["error", "done"]
    assert received[-2]["code"] == "PROVIDER_TIMEOUT"
    assert "1.5 s (TALORYS_MODEL_STEP_DEADLINE)" in received[-2]["message"]
    reply = reply_of(received)
    assert (reply.status, reply.error_code) == ("error", "PROVIDER_TIMEOUT")
    assert reply.content.startswith("Thinking")  # what came is kept
    assert reply.conversation.turn_id == ""  # the conversation is free again
    # The server was hung up on, and no further step was asked for.
    assert fake_openai.disconnected.wait(HANG_SECONDS)
    assert len(fake_openai.requests) == 1
