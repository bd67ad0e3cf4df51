"""The SQL budget of a chat turn before its first text: at most STATEMENT_BUDGET
statements from the moment the turn's stream starts (after begin_turn's claim) to its first
text, on every thread, in a conversation with history and memories, semantic recall off and on.

Counted on PostgreSQL as benchmarks/turn_overhead.py counts them: a wrapper on every connection
made meanwhile (each trip makes its own: agent/runner/db.py). A count, not a timing.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.db import connection
from django.db.backends.signals import connection_created

from agent.models import Conversation, Message
from agent.runner import begin_turn, lease, stream_turn
from agent.runner.opening import Opening, opening_read
from agent.runner.phases import PHASES
from memory.models import IndexState, Memory
from memory.selectors import recall_clock_of
from memory.services import reindex_recent
from talorys.owner.selectors import owner_settings_get
from talorys.owner.services.settings import owner_settings_update
from tests.agent.fake_openai import text
from tests.agent.test_runner import TURN_DATABASE, use_fake
from tests.memory.conftest import use_fake_embeddings

pytestmark = TURN_DATABASE

STATEMENT_BUDGET = 6
# begin_turn's own: the claim, closing a reply left streaming, the parent, the two messages.
CLAIM_STATEMENTS = 5
QUESTION = "What did I plan for the garden this weekend?"


class _Sent:
    def __init__(self) -> None:
        self.sql: list[str] = []
        self.counting = False

    def __call__(self, execute, sql, params, many, context):  # type: ignore[no-untyped-def]
        if self.counting:
            self.sql.append(sql)
        return execute(sql, params, many, context)


@contextmanager
def _counted() -> Iterator[_Sent]:
    sent = _Sent()

    def hook(sender: Any, connection: Any, **kwargs: Any) -> None:
        if sent not in connection.execute_wrappers:  # a thread's connection, made again
            connection.execute_wrappers.append(sent)

    connection_created.connect(hook)
    try:
        with connection.execute_wrapper(sent):  # this thread's: begin_turn runs on it
            yield sent
    finally:
        connection_created.disconnect(hook)


def _before_first_text(conversation_id: int) -> tuple[list[str], list[str]]:
    """begin_turn's statements, and the stream's before its first text."""

    async def run() -> tuple[list[str], list[str]]:
        with _counted() as sent:
            sent.counting = True
            start = await begin_turn(conversation_id=conversation_id, text=QUESTION)
            claim, sent.sql = sent.sql, []
            async for event in stream_turn(start):
                if event["type"] == "text":
                    sent.counting = False
            return claim, sent.sql

    return async_to_sync(run)()


def _conversation() -> int:
    conversation = Conversation.objects.create(title="Weekend", summary="Earlier: plans.")
    for n in range(30):
        Message.objects.create(
            conversation=conversation,
            role=Message.Role.USER if n % 2 == 0 else Message.Role.ASSISTANT,
            content=f"Message {n} about the garden and the weekend.",
            status=Message.Status.COMPLETE,
        )
    for n in range(40):
        Memory.objects.create(text=f"The garden has {n} tulips" if n % 4 else f"Fact {n}")
    reindex_recent()
    return conversation.pk


def _listed(sql: list[str]) -> str:
    return "\n".join(f"{n}. {statement[:160]}" for n, statement in enumerate(sql, 1))


@pytest.mark.parametrize("semantic", [False, True], ids=["keyword", "semantic"])
def test_a_turn_sends_at_most_its_budget_of_statements_before_its_first_text(
    needs_postgres, fake_openai, semantic, monkeypatch
):
    # The turn's own statements: not the lease's renewal, which its keeper sends beside it
    # every few seconds (agent/runner/lease.py) and a slow machine could see before the text.
    monkeypatch.setattr(lease, "RENEW_SECONDS", 3600.0)
    use_fake(fake_openai)
    if semantic:
        use_fake_embeddings(fake_openai)
    else:
        owner_settings_update(semantic_enabled=False)
    conversation_id = _conversation()
    fake_openai.script(text("Warm."), text("Tulips."))
    _before_first_text(conversation_id)  # the process's copy of the settings, the index loaded

    claim, stream = _before_first_text(conversation_id)

    assert len(claim) <= CLAIM_STATEMENTS, _listed(claim)
    assert len(stream) <= STATEMENT_BUDGET, _listed(stream)
    assert fake_openai.requests[-1]["messages"][0]["role"] == "system"  # the turn did answer


def test_the_turn_log_line_carries_the_time_of_each_phase(needs_postgres, fake_openai, caplog):
    use_fake(fake_openai)
    fake_openai.script(text("Tulips."))
    conversation_id = _conversation()

    with caplog.at_level(logging.INFO, logger="agent.runner.chat"):
        _before_first_text(conversation_id)

    ended = [r for r in caplog.records if r.getMessage().startswith("Turn ended")]
    phases = ended[-1].phases_ms  # type: ignore[attr-defined]
    assert set(phases) == set(PHASES)
    assert all(ms >= 0 for ms in phases.values())
    assert phases["first_text"] >= max(phases["claim"], phases["reads"], phases["prompt"])


def test_the_opening_read_is_the_heartbeat_check_with_what_the_turn_reads_anyway():
    conversation = Conversation.objects.create(
        title="Weekend", summary="Earlier.", turn_id="t1", model="big-model"
    )
    assert opening_read(conversation_id=conversation.pk, turn_id="t1") == Opening(
        summary="Earlier.", model="big-model", settings_version=None, index_clock=None
    )  # no settings row, no index yet
    version = owner_settings_get().version
    reindex_recent()
    clock = IndexState.objects.values("recent_since", "generation", "seq", "purged_upto").get()

    opened = opening_read(conversation_id=conversation.pk, turn_id="t1")

    assert opened == Opening(
        summary="Earlier.", model="big-model", settings_version=version, index_clock=clock
    )
    assert opening_read(conversation_id=conversation.pk, turn_id="t2") is None  # another's turn
    Conversation.objects.filter(pk=conversation.pk).update(turn_cancel_requested=True)
    assert opening_read(conversation_id=conversation.pk, turn_id="t1") is None  # cancelled


@pytest.mark.parametrize("since", ["2026-12-02 17:14:54.085050", dt.datetime(2026, 12, 2, 17, 14)])
def test_a_clock_read_without_the_orm_is_an_aware_time(since):
    clock = recall_clock_of([since, "gen", 3, 1])

    assert clock is not None and clock["recent_since"].tzinfo is not None
    assert recall_clock_of([None, None, None, None]) is None
