"""The history window and the running summary: the pure rules, then a turn that uses them."""

from __future__ import annotations

import logging

import pytest

from agent import context
from agent.context import HistoryEntry, Window
from agent.models import Conversation, Message
from agent.selectors import turn_history
from talorys.owner.models import UsageDay
from tests.agent.fake_openai import error, text
from tests.agent.test_runner import TURN_DATABASE, conversation_with, sent_messages, turn, use_fake

pytestmark = TURN_DATABASE  # a turn's trips see committed rows only


def entry(pk: int, chars: int, role: str = "user") -> HistoryEntry:
    return HistoryEntry(id=pk, role=role, content="x" * chars)


# --- pure rules --------------------------------------------------------------------------------


def test_tokens_are_estimated_as_characters_over_four_rounded_up():
    assert context.estimate_tokens("") == 0
    assert context.estimate_tokens("abcd") == 1
    assert context.estimate_tokens("abcde") == 2


def test_history_budget_is_the_context_minus_the_system_prompt_and_a_reserve():
    prompt = "p" * 4000  # 1,000 tokens
    assert context.history_budget(max_context_tokens=8000, system_prompt=prompt) == 6400
    # A prompt that eats the whole context still leaves a floor for the newest messages.
    assert context.history_budget(max_context_tokens=1000, system_prompt=prompt) == 500


def test_everything_that_fits_is_kept():
    history = [entry(1, 400), entry(2, 400, "assistant"), entry(3, 400)]
    window = context.select_window(history, budget_tokens=300)
    assert window == Window(kept=history, overflow=[])


def test_the_oldest_messages_are_evicted_first_until_the_rest_fit():
    history = [entry(pk, 400) for pk in range(1, 6)]  # 100 tokens each
    window = context.select_window(history, budget_tokens=250)
    assert [e.id for e in window.kept] == [4, 5]
    assert [e.id for e in window.overflow] == [1, 2, 3]


def test_the_newest_message_is_kept_even_when_it_alone_is_too_big():
    history = [entry(1, 40), entry(2, 40_000, "assistant")]
    window = context.select_window(history, budget_tokens=10)
    assert [e.id for e in window.kept] == [2]
    assert [e.id for e in window.overflow] == [1]


def test_owner_message_bodies_are_capped_in_the_window_but_replies_are_not():
    history = [entry(1, 20_000, "assistant"), entry(2, 20_000, "user")]
    window = context.select_window(history, budget_tokens=100_000)
    assert [len(e.content) for e in window.kept] == [20_000, context.MAX_USER_CHARS]
    # The cap also counts toward the budget: 5,000 + 4,000 tokens fit in 9,000.
    assert len(context.select_window(history, budget_tokens=9_000).kept) == 2


@pytest.mark.parametrize(
    ("overflow", "remaining", "expected"),
    [(7, 100, False), (8, 1, False), (8, 2, True), (50, 2, True), (0, 0, False)],
)
def test_a_summary_needs_eight_overflowing_messages_and_two_requests_left(
    overflow, remaining, expected
):
    wanted = context.overflow_needs_summary(overflow) and context.budget_allows_summary(
        left_before_turn=remaining
    )
    assert wanted is expected


def test_the_summarizer_gets_the_prior_summary_and_overflow_entries_cut_to_1500_chars():
    overflow = [
        HistoryEntry(id=1, role="user", content="A" * 5000),
        HistoryEntry(id=2, role="assistant", content="Sure."),
    ]
    system, request = context.summary_messages(prior_summary="Owner likes tea.", overflow=overflow)
    assert system.content == context.SUMMARY_SYSTEM
    assert "Owner likes tea." in request.content
    assert f"Owner: {'A' * 1500}\n" in request.content
    assert "A" * 1501 not in request.content
    assert "Assistant: Sure." in request.content
    assert "at most 2000 characters" in request.content
    assert "(none)" in context.summary_messages(prior_summary="", overflow=overflow)[1].content


def test_a_summary_is_trimmed_to_2000_characters():
    assert len(context.clean_summary("  " + "s" * 3000)) == context.SUMMARY_MAX_CHARS
    assert context.clean_summary("  short \n") == "short"


# --- what a turn loads -------------------------------------------------------------------------


def test_at_most_200_messages_are_loaded_and_only_after_the_summary(db):
    conversation = conversation_with(*[("user", f"m{n}") for n in range(250)])
    ids = list(conversation.messages.values_list("id", flat=True))

    history = turn_history(conversation_id=conversation.pk, after_id=None)[0]
    assert len(history) == 200
    assert [e.id for e in history] == ids[-200:]

    after = turn_history(conversation_id=conversation.pk, after_id=ids[-5])[0]
    assert [e.id for e in after] == ids[-4:]


def test_a_turn_sends_200_messages_at_most(db, fake_openai):
    use_fake(fake_openai, max_context_tokens=100_000)
    conversation = conversation_with(*[("user", f"m{n}") for n in range(250)])
    fake_openai.script(text("ok"))

    turn(conversation_id=conversation.pk, text="latest")

    sent = sent_messages(fake_openai.requests[0])
    assert len(sent) == 1 + 200
    assert sent[-1] == ("user", "latest")
    assert sent[1] == ("user", "m51")


def test_a_long_owner_message_reaches_the_model_capped_at_16000_chars(db, fake_openai):
    use_fake(fake_openai, max_context_tokens=100_000)
    fake_openai.script(text("ok"))

    turn(text="y" * 20_000)

    assert sent_messages(fake_openai.requests[0])[-1] == ("user", "y" * 16_000)
    # The saved message keeps all of it.
    assert len(Message.objects.get(role="user").content) == 20_000


# --- the summary call --------------------------------------------------------------------------


def long_conversation(pairs: int, chars: int = 1000) -> Conversation:
    messages = []
    for n in range(pairs):
        messages.append(("user", f"Q{n} " + "q" * chars))
        messages.append(("assistant", f"A{n} " + "a" * chars))
    return conversation_with(*messages)


def test_overflow_is_folded_into_a_stored_summary_by_a_separate_call(db, fake_openai):
    # ~2,000-token context: a few recent messages fit, the rest overflow.
    use_fake(fake_openai, max_context_tokens=2000)
    conversation = long_conversation(20)
    conversation.summary = "Earlier: the owner plans a trip."
    conversation.save()
    fake_openai.script(text("The owner is planning a trip to Lisbon in May."), text("Sure."))

    result = turn(conversation_id=conversation.pk, text="Book it")

    assert result[-1]["status"] == "complete"
    summary_request, answer_request = fake_openai.requests
    # The summarizer sees the old summary and the overflow, and no tools.
    assert sent_messages(summary_request)[0] == ("system", context.SUMMARY_SYSTEM)
    assert "Earlier: the owner plans a trip." in summary_request["messages"][1]["content"]
    assert "Q0 " in summary_request["messages"][1]["content"]
    assert "tools" not in summary_request
    # The answer gets the new summary in its system prompt, and only the recent window.
    system = answer_request["messages"][0]["content"]
    assert "The owner is planning a trip to Lisbon in May." in system
    assert "Earlier: the owner plans a trip." not in system
    conversation.refresh_from_db()
    assert conversation.summary == "The owner is planning a trip to Lisbon in May."
    sent = [content for _, content in sent_messages(answer_request)[1:]]
    covered = Message.objects.filter(conversation=conversation, id__lte=conversation.summary_upto)
    assert covered.count() >= 8
    assert not {m.content for m in covered} & set(sent)
    first_kept = Message.objects.get(conversation=conversation, content=sent[0])
    assert first_kept.pk == conversation.summary_upto + 1
    # Both calls were reserved from the day's budget.
    assert UsageDay.objects.get().ai_requests == 2

    # The next turn no longer loads what the summary covers.
    fake_openai.script(text("ok"))
    turn(conversation_id=conversation.pk, text="Thanks")
    assert "Q0 " not in str(fake_openai.requests[-1]["messages"])


def test_fewer_than_eight_overflowing_messages_are_dropped_without_a_summary(db, fake_openai):
    use_fake(fake_openai, max_context_tokens=2000)
    conversation = long_conversation(4)  # 8 messages of ~250 tokens; about 4 fit
    fake_openai.script(text("Sure."))

    turn(conversation_id=conversation.pk, text="Next")

    assert len(fake_openai.requests) == 1
    sent = str(fake_openai.requests[0]["messages"])
    assert "Q0 " not in sent
    assert "A3 " in sent
    conversation.refresh_from_db()
    assert (conversation.summary, conversation.summary_upto) == ("", None)


def test_a_summary_runs_when_exactly_two_requests_are_left_before_the_turn(db, fake_openai):
    # The turn's first request is reserved before the summary is considered: two left before
    # the turn are one for the summary and one for the answer.
    use_fake(fake_openai, max_context_tokens=2000, daily_ai_requests=2)
    conversation = long_conversation(20)
    fake_openai.script(text("The owner asked twenty questions."), text("Sure."))

    result = turn(conversation_id=conversation.pk, text="Next")

    assert result[-1]["status"] == "complete"
    assert len(fake_openai.requests) == 2
    conversation.refresh_from_db()
    assert conversation.summary == "The owner asked twenty questions."
    assert UsageDay.objects.get().ai_requests == 2


def test_no_summary_when_fewer_than_two_requests_remain(db, fake_openai):
    use_fake(fake_openai, max_context_tokens=2000, daily_ai_requests=1)
    conversation = long_conversation(20)
    fake_openai.script(text("Sure."))

    result = turn(conversation_id=conversation.pk, text="Next")

    assert result[-1]["status"] == "complete"
    assert len(fake_openai.requests) == 1
    assert sent_messages(fake_openai.requests[0])[0][0] == "system"
    conversation.refresh_from_db()
    assert conversation.summary_upto is None


def test_a_failed_summary_is_logged_and_the_turn_goes_on(db, fake_openai, caplog):
    use_fake(fake_openai, max_context_tokens=2000)
    conversation = long_conversation(20)
    conversation.summary = "Old summary."
    conversation.save()
    fake_openai.script(error(500, "summarizer down"), text("Still here."))

    with caplog.at_level(logging.WARNING, logger="agent.runner"):
        result = turn(conversation_id=conversation.pk, text="Next")

    assert result[-1]["status"] == "complete"
    assert "summary failed" in caplog.text
    conversation.refresh_from_db()
    assert (conversation.summary, conversation.summary_upto) == ("Old summary.", None)
    assert "Old summary." in fake_openai.requests[1]["messages"][0]["content"]


def test_a_long_summary_is_stored_trimmed(db, fake_openai):
    use_fake(fake_openai, max_context_tokens=2000)
    conversation = long_conversation(20)
    fake_openai.script(text("S" * 5000), text("ok"))

    turn(conversation_id=conversation.pk, text="Next")

    conversation.refresh_from_db()
    assert conversation.summary == "S" * 2000
