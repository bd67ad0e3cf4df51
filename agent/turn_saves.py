"""A reply's saves while its turn holds the lease: the text so far as it streams
(``turn_text_save``) and its end (``turn_finish``, which gives the conversation back).

What streamed is saved as it goes (agent/runner/lease.py, every few seconds or kilobytes): a web
process killed mid-reply, or one that loses its database connection and never gets it back,
leaves the reply ``streaming`` with the text last saved, and the next turn closes it as
interrupted (services.interrupted_replies_close), keeping that text.
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from agent.executor import ToolActivity
from agent.models import Conversation, Message
from agent.services import NO_TURN
from talorys.providers.base import without_nul
from talorys.web.live import pages_tell


def turn_text_save(*, message_id: int, content: str) -> None:
    """The text a reply has streamed so far, in one UPDATE. A reply that is no longer streaming
    (saved by turn_finish, or closed as interrupted by a turn that took over) is left as it is."""
    Message.objects.filter(pk=message_id, status=Message.Status.STREAMING).update(
        content=without_nul(content)
    )


def turn_finish(
    *,
    conversation_id: int,
    turn_id: str,
    message_id: int,
    content: str | None,
    tool_activity: list[ToolActivity],
    status: Message.Status,
    error_code: str = "",
    error_message: str = "",
) -> Message.Status:
    """Save the assistant's reply with its final status and give the conversation back.

    Returns the status saved: a COMPLETE reply whose turn had a cancel accepted (turn_cancel
    answered True) is saved CANCELLED. The conversation row is locked first, so a cancel racing
    this either lands before (and wins) or finds no turn (and answers False). ``content``
    None keeps the text saved while the reply streamed (turn_text_save).
    NUL characters are dropped from every text: PostgreSQL refuses them in text and jsonb.
    """
    with transaction.atomic():
        cancelled = (
            Conversation.objects.select_for_update()
            .filter(pk=conversation_id, turn_id=turn_id, turn_cancel_requested=True)
            .exists()
        )
        if cancelled and status == Message.Status.COMPLETE:
            status = Message.Status.CANCELLED
        # Still streaming: a process that took over a dead turn's lease has already closed this
        # reply as INTERRUPTED, and a late finish must not overwrite that.
        text = {} if content is None else {"content": without_nul(content)}
        Message.objects.filter(pk=message_id, status=Message.Status.STREAMING).update(
            **text,
            tool_activity=without_nul(tool_activity),
            status=status,
            error_code=without_nul(error_code),
            error_message=without_nul(error_message),
            updated_at=timezone.now(),
        )
        Conversation.objects.filter(pk=conversation_id, turn_id=turn_id).update(
            **NO_TURN, updated_at=timezone.now()
        )
        pages_tell("conversation", conversation_id=conversation_id, change="reply")
    return status
