"""The links between imported messages (``Message.parent``: agent/branches.py).

A backup written since messages had a parent carries each one's ``parent_id``; one written
before carries none. Such a conversation's added messages are linked as the upgrade linked the
conversations stored here (agent/lineage.py): the active messages as one chain, what was
replaced as the branch it was. A conversation is taken as written before when none of its added
messages has a parent: a conversation the app made holds a reply to each owner message, and a
reply always has one.

A link must stay within its conversation: a file that links a message to another
conversation's is refused (rows.py already refuses a parent that is not older than its child,
so no file makes a loop).
"""

from __future__ import annotations

from collections import defaultdict

from django.db.models import F

from agent.lineage import chain_parents
from agent.models import Message
from talorys.lib.errors import ValidationFailed

BATCH = 500


def messages_link(added: list[int]) -> None:
    """Link the messages this import added (``added``: their ids) that came without links;
    refuse links across conversations. Inside the import's transaction."""
    crossed = (
        Message.objects.filter(pk__in=added, parent__isnull=False)
        .exclude(parent__conversation_id=F("conversation_id"))
        .values_list("pk", flat=True)
        .first()
    )
    if crossed is not None:
        raise ValidationFailed(
            f"The backup links message {crossed} to a message of another conversation, so "
            "nothing was imported."
        )
    linked: dict[int, bool] = defaultdict(bool)
    for conversation_id, parent_id in Message.objects.filter(pk__in=added).values_list(
        "conversation_id", "parent_id"
    ):
        linked[conversation_id] |= parent_id is not None
    for conversation_id in (c for c, has_links in linked.items() if not has_links):
        _link_chain(conversation_id, set(added))


def _link_chain(conversation_id: int, added: set[int]) -> None:
    rows = list(
        Message.objects.filter(conversation_id=conversation_id)
        .order_by("id")
        .values_list("id", "replaced_at")
    )
    links = [
        Message(pk=pk, parent_id=parent)
        for pk, parent in chain_parents(rows).items()
        if pk in added and parent is not None
    ]
    Message.objects.bulk_update(links, ["parent"], batch_size=BATCH)
