"""Recall ranks with time and conversations: of two statements that
match alike the newer comes first, and a short reply is found by the question it answers."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from agent.models import Conversation, Message
from memory import selectors
from memory.models import RecallEntry

pytestmark = pytest.mark.django_db


def said(conversation: Conversation, role: str, content: str, *, days_ago: int = 0) -> Message:
    message = Message.objects.create(conversation=conversation, role=role, content=content)
    when = timezone.now() - dt.timedelta(days=days_ago)
    Message.objects.filter(pk=message.pk).update(created_at=when)
    return message


def found(query: str) -> list[int]:
    return [
        hit.id for hit in selectors.recall_items(query=query, kinds=["message"], mode="keyword")
    ]


def test_the_newer_of_two_statements_that_match_alike_ranks_first():
    # The newer statement is written first, so its id (and the index's order) is the older one:
    # only its time can put it first.
    now = said(Conversation.objects.create(), "user", "My dentist is Dr Brightwater", days_ago=3)
    then = said(Conversation.objects.create(), "user", "My dentist is Dr Amberley", days_ago=200)

    assert found("who is my dentist")[:2] == [now.pk, then.pk]
    assert RecallEntry.objects.get(kind="message", object_id=now.pk).stated_at == (
        Message.objects.get(pk=now.pk).created_at
    )


def test_recency_does_not_overturn_a_clearly_better_match():
    old = said(
        Conversation.objects.create(),
        "user",
        "The dentist Dr Amberley moved the checkup",
        days_ago=300,
    )
    new = said(Conversation.objects.create(), "user", "Dentist, apparently", days_ago=1)

    assert found("dentist amberley checkup")[:2] == [old.pk, new.pk]


def test_a_short_reply_is_found_by_the_question_it_answers():
    trip = Conversation.objects.create()
    question = said(trip, "assistant", "Did you get to the Hokusai exhibition in the end?")
    other = said(Conversation.objects.create(), "assistant", "Okay.")  # between them, by id
    reply = said(trip, "user", "Yes, last Tuesday, with my sister.")

    hits = found("when did I see the Hokusai exhibition")

    assert hits[:2] == [question.pk, reply.pk]  # the question matches best, its answer next
    assert other.pk not in hits  # a turn of another conversation leans on nothing here


def test_a_reply_leans_on_the_turn_before_it_as_it_is_now():
    trip = Conversation.objects.create()
    question = said(trip, "assistant", "Did you get to the Hokusai exhibition in the end?")
    aside = said(trip, "user", "Hold on, the kettle.")
    reply = said(trip, "user", "Yes, last Tuesday, with my sister.")
    assert reply.pk not in found("Hokusai exhibition")  # the aside is what it follows

    Message.objects.filter(pk=aside.pk).update(
        replaced_at=timezone.now(), updated_at=timezone.now()
    )

    assert found("Hokusai exhibition")[:2] == [question.pk, reply.pk]
