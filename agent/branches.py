"""Branches of a conversation, and the switch between them.

Messages form a tree (``Message.parent``): an edit of an owner message starts a sibling of it,
a regenerate a sibling of the reply (agent/rerun.py). The active branch is the path from a first
message down to a leaf, the messages not ``replaced_at``; every read (the page, the model's
history, recall, the /v1 history match) already reads just those, so a switch only moves that
mark: the messages of the branch left get it, those of the branch shown lose it. Nothing is
ever deleted, and a conversation in the bin keeps every branch.

A switch takes the conversation's turn lease (agent/services.py) for its one transaction: it
never lands while a reply is being written, and no turn starts while it moves the mark.
"""

from __future__ import annotations

import datetime as dt
import secrets
from collections import defaultdict

from django.db import transaction
from django.utils import timezone

from agent.models import Message
from agent.rerun import summary_scope
from agent.services import interrupted_replies_close, turn_claim, turn_release
from talorys.lib.errors import NotFound
from talorys.web.live import pages_tell

Rows = dict[int, tuple[int | None, dt.datetime | None]]  # id -> (parent id, replaced_at)


def _branch_through(rows: Rows, target: int) -> set[int]:
    """The path from the first message down to ``target``, then on down to a leaf: at each
    fork, the child that left the active branch last (the branch the owner was on there)."""
    path = set()
    node: int | None = target
    while node is not None and node in rows and node not in path:  # links stay in (backup/)
        path.add(node)
        node = rows[node][0]
    children: dict[int, list[int]] = defaultdict(list)
    for pk, (parent_id, _replaced) in rows.items():
        if parent_id is not None:
            children[parent_id].append(pk)
    now = timezone.now()  # a child still on the active branch left it last of all
    node = target
    while children[node]:
        node = max(children[node], key=lambda pk: (rows[pk][1] or now, pk))
        if node in path:
            break
        path.add(node)
    return path


def branch_switch(*, conversation_id: int, message_id: int) -> None:
    """Show the branch through ``message_id`` (a message of this conversation, on any branch).
    Raises NotFound for a message not in it, Conflict while a reply is being written."""
    turn_id = secrets.token_hex(16)
    turn_claim(conversation_id=conversation_id, turn_id=turn_id)
    try:
        with transaction.atomic():
            interrupted_replies_close(conversation_id=conversation_id)
            rows: Rows = {
                pk: (parent_id, replaced_at)
                for pk, parent_id, replaced_at in Message.objects.filter(
                    conversation_id=conversation_id
                ).values_list("pk", "parent_id", "replaced_at")
            }
            if message_id not in rows:
                raise NotFound(f"Message {message_id} is not in conversation {conversation_id}.")
            shown = {pk for pk, (_parent, replaced) in rows.items() if replaced is None}
            wanted = _branch_through(rows, message_id)
            now = timezone.now()  # updated_at moves with the mark: recall re-reads both sides
            Message.objects.filter(pk__in=shown - wanted).update(replaced_at=now, updated_at=now)
            Message.objects.filter(pk__in=wanted - shown).update(replaced_at=None, updated_at=now)
            if shown != wanted:
                summary_scope(conversation_id=conversation_id, changed_from=min(shown ^ wanted))
                pages_tell("conversation", conversation_id=conversation_id, change="branch")
    finally:
        turn_release(conversation_id=conversation_id, turn_id=turn_id)
