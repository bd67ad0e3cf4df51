"""A conversation's branches (agent/branches.py) go out and come back with a backup: each
message's ``parent_id``. A backup written before messages had links still imports, linked as
the upgrade links them; a link a conversation could not hold is refused, changing nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.utils import timezone

from agent.branches import branch_switch
from agent.models import Conversation, Message
from backup.services import backup_import
from talorys.lib.errors import ValidationFailed
from tests.backup.helpers import clear, document, exported, fingerprint, raw

pytestmark = pytest.mark.django_db


def branched() -> Conversation:
    """name a fruit / Banana. / (a red one / Cherry. | a yellow one / Lemon., shown)."""
    conversation = Conversation.objects.create(title="Fruit")
    earlier = timezone.now()

    def say(role: str, content: str, parent: Message | None, *, replaced: bool = False):
        return Message.objects.create(
            conversation=conversation,
            role=role,
            content=content,
            parent=parent,
            replaced_at=earlier if replaced else None,
        )

    banana = say("assistant", "Banana.", say("user", "name a fruit", None))
    say("assistant", "Cherry.", say("user", "a red one", banana, replaced=True), replaced=True)
    say("assistant", "Lemon.", say("user", "a yellow one", banana))
    return conversation


def shown(conversation_id: int) -> list[str]:
    return list(
        Message.objects.filter(conversation_id=conversation_id, replaced_at=None).values_list(
            "content", flat=True
        )
    )


def links() -> dict[str, str | None]:
    return dict(Message.objects.values_list("content", "parent__content"))


def test_branches_survive_a_round_trip_and_can_be_switched_to():
    conversation = branched()
    before_links = links()
    backup = exported()
    messages = {row["content"]: row for row in backup["data"]["messages"]}
    assert messages["Lemon."]["parent_id"] == messages["a yellow one"]["id"]

    clear()
    backup_import(source=json.dumps(backup).encode())

    assert links() == before_links
    assert shown(conversation.pk) == ["name a fruit", "Banana.", "a yellow one", "Lemon."]
    branch_switch(
        conversation_id=conversation.pk,
        message_id=Message.objects.get(content="a red one").pk,
    )
    assert shown(conversation.pk) == ["name a fruit", "Banana.", "a red one", "Cherry."]


def without_links(data: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """``data`` as a backup written before messages had links held it."""
    for row in data["messages"]:
        del row["parent_id"]
    return data


def test_a_backup_from_before_branches_imports_with_its_messages_linked():
    conversation = branched()
    before_links = links()
    old = without_links(exported()["data"])
    clear()

    backup_import(source=raw(document(old)))

    # The replaced branch is rebuilt from when it was replaced, as the upgrade does.
    assert links() == before_links
    assert shown(conversation.pk) == ["name a fruit", "Banana.", "a yellow one", "Lemon."]


def test_a_link_to_another_conversations_message_is_refused_and_changes_nothing():
    branched()
    other = Conversation.objects.create(title="Other")
    Message.objects.create(conversation=other, role="user", content="elsewhere")
    data = exported()["data"]
    elsewhere = next(row for row in data["messages"] if row["content"] == "elsewhere")
    lemon = next(row for row in data["messages"] if row["content"] == "Lemon.")
    clear()
    before = fingerprint()
    # Cherry's id: a new row, linked to a message of the other conversation.
    data["messages"] = [row for row in data["messages"] if row["content"] != "Lemon."] + [
        dict(lemon, id=lemon["id"] + 100, parent_id=elsewhere["id"])
    ]
    data["messages"].sort(key=lambda row: row["id"])

    with pytest.raises(ValidationFailed, match="another conversation"):
        backup_import(source=raw(document(data)))

    assert fingerprint() == before


def test_a_message_linked_to_a_later_one_is_refused():
    branched()
    data = exported()["data"]
    first = data["messages"][0]
    first["parent_id"] = data["messages"][1]["id"]
    before = fingerprint()

    with pytest.raises(ValidationFailed, match="parent_id must be smaller than id"):
        backup_import(source=raw(document(data)))

    assert fingerprint() == before
