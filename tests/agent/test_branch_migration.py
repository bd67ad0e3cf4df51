"""Conversations stored before messages had a parent are linked in place by the migration
(agent/migrations/0007, agent/lineage.py): the active messages as one chain, and what a
regenerate or an edit replaced as the branch it was. Nothing is lost."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from agent.lineage import chain_parents
from agent.models import Message

T1 = dt.datetime(2026, 1, 1, 9, tzinfo=dt.UTC)
T2 = T1 + dt.timedelta(hours=1)
T3 = T1 + dt.timedelta(hours=2)


def test_a_plain_conversation_is_one_chain():
    assert chain_parents([(1, None), (2, None), (5, None)]) == {1: None, 2: 1, 5: 2}


def test_an_edit_and_a_regenerate_become_the_branches_they_were():
    # u1 a1, then u2 a2 regenerated (a2 replaced at T1, a2b), then u2 edited at T3 (u2, a2b
    # replaced), u2' a2'.
    rows = [(1, None), (2, None), (3, T3), (4, T1), (5, T3), (6, None), (7, None)]

    assert chain_parents(rows) == {1: None, 2: 1, 3: 2, 4: 3, 5: 3, 6: 2, 7: 6}


def test_an_edit_of_the_first_message_makes_two_first_messages():
    assert chain_parents([(1, T2), (2, T2), (3, None), (4, None)]) == {
        1: None,
        2: 1,
        3: None,
        4: 3,
    }


@pytest.mark.django_db(transaction=True)
def test_the_migration_links_stored_conversations_without_losing_a_message():
    before = [("agent", "0006_conversation_origin_api")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    apps = executor.loader.project_state(before).apps
    old_conversation = apps.get_model("agent", "Conversation")
    old_message = apps.get_model("agent", "Message")
    now = timezone.now()
    plain = old_conversation.objects.create(title="Plain")
    edited = old_conversation.objects.create(title="Edited")
    for content in ("hi", "Hello!", "bye", "Bye!"):
        old_message.objects.create(conversation=plain, role="user", content=content)
    said = {}
    for content, replaced in (
        ("name a fruit", None),
        ("Banana.", None),
        ("a red one", now),
        ("Cherry.", now),
        ("a yellow one", None),
        ("Lemon.", None),
    ):
        said[content] = old_message.objects.create(
            conversation=edited, role="user", content=content, replaced_at=replaced
        ).pk

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    parents = dict(Message.objects.values_list("content", "parent__content"))
    assert parents == {
        "hi": None,
        "Hello!": "hi",
        "bye": "Hello!",
        "Bye!": "bye",
        "name a fruit": None,
        "Banana.": "name a fruit",
        "a red one": "Banana.",
        "Cherry.": "a red one",
        "a yellow one": "Banana.",
        "Lemon.": "a yellow one",
    }
    assert Message.objects.count() == 10
    # Still what the page shows, and the old branch is reachable: its own first message's sibling.
    assert list(
        Message.objects.filter(conversation_id=edited.pk, replaced_at=None).values_list(
            "content", flat=True
        )
    ) == ["name a fruit", "Banana.", "a yellow one", "Lemon."]
    assert (
        Message.objects.get(pk=said["a red one"]).parent_id
        == Message.objects.get(pk=said["a yellow one"]).parent_id
    )
