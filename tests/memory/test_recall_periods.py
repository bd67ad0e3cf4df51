"""The periods a question names weigh what was said then: "in May 2023" finds May's statement
before a newer one that matches alike; a question that names no period ranks as before."""

from __future__ import annotations

import datetime as dt

import pytest

from agent.models import Conversation, Message
from memory import selectors
from memory.recall.periods import periods

NOW = dt.datetime(2026, 3, 18, 15, 0, tzinfo=dt.UTC)  # a Wednesday


def utc(*parts: int) -> float:
    return dt.datetime(*parts, tzinfo=dt.UTC).timestamp()


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What setback did Mel face in October 2023?", [(utc(2023, 10, 1), utc(2023, 11, 1))]),
        ("What did she show on October 13, 2023?", [(utc(2023, 10, 13), utc(2023, 10, 14))]),
        ("What did Gina find on 1 February, 2023?", [(utc(2023, 2, 1), utc(2023, 2, 2))]),
        ("How often did I swim in 2022?", [(utc(2022, 1, 1), utc(2023, 1, 1))]),
        ("What did I plan in May?", [(utc(2025, 5, 1), utc(2025, 6, 1))]),  # May not begun
        ("What did I plan in March?", [(utc(2026, 3, 1), utc(2026, 4, 1))]),
        ("What did I buy yesterday?", [(utc(2026, 3, 17), utc(2026, 3, 18))]),
        ("Who called last week?", [(utc(2026, 3, 9), utc(2026, 3, 16))]),
        ("What did I read last month?", [(utc(2026, 2, 1), utc(2026, 3, 1))]),
        ("Where did I go last year?", [(utc(2025, 1, 1), utc(2026, 1, 1))]),
        (
            "Did I move between June 2021 and 2024?",
            [(utc(2021, 6, 1), utc(2021, 7, 1))],  # "and 2024" names no period on its own
        ),
        ("What is the code 2023-A7 for?", []),
        # No such day: the month it names still counts.
        ("Is the 31 February, 2023 meeting on?", [(utc(2023, 2, 1), utc(2023, 3, 1))]),
        ("What may I bring?", []),
    ],
)
def test_a_question_names_its_periods(question, expected):
    assert periods(question, now=NOW) == expected


def said(content: str, when: dt.datetime) -> Message:
    message = Message.objects.create(
        conversation=Conversation.objects.create(), role="user", content=content
    )
    Message.objects.filter(pk=message.pk).update(created_at=when)
    return message


@pytest.mark.django_db
@pytest.mark.parametrize("mode", ["keyword", None])
def test_what_was_said_in_the_named_period_ranks_first(mode, local_embeddings):
    may = said(
        "Donated the old winter coats to the shelter", dt.datetime(2023, 5, 9, tzinfo=dt.UTC)
    )
    later = said(
        "Donated the old winter coats to the shelter", dt.datetime(2024, 1, 9, tzinfo=dt.UTC)
    )

    def ranked(query: str) -> list[int]:
        hits = selectors.recall_items(query=query, kinds=["message"], mode=mode)
        return [hit.id for hit in hits]

    # Without a period the newer statement wins (the recency prior); May's with one.
    assert ranked("what did I donate to the shelter")[:2] == [later.pk, may.pk]
    assert ranked("what did I donate to the shelter in May 2023")[:2] == [may.pk, later.pk]
    # A period that matches nothing else lifts nothing.
    assert ranked("tax return in May 2023") == []
