""" "Your reply is ready": for the owner who left before a long reply ended.

A phone owner who switches apps mid-reply, or closes the tab, has no page attached when the
turn ends. If the turn ran at least ``TALORYS_REPLY_READY_SECONDS`` (a short reply ends before
anyone leaves), a notification says so, live on any open page and by Web Push, and opens the
conversation. A page attached anywhere (in this process, or in another through Redis) means the
owner is reading it: no notification. A cancelled turn was the owner's own doing: none either.
Only the conversation's title goes out, never the reply's text: a lock screen is no place for it.
"""

from __future__ import annotations

import logging
import time

from django.conf import settings

from agent.live import mirror
from agent.live.turns import LiveTurn
from agent.models import Conversation, Message
from agent.runner.db import db
from talorys.lib.validation import clip
from talorys.notifications.models import Notification
from talorys.notifications.services import notification_send

log = logging.getLogger(__name__)


async def reply_ready_notice(turn: LiveTurn) -> None:
    """Called when a turn's events have ended: notify the owner if nobody was following."""
    if turn.status not in (Message.Status.COMPLETE, Message.Status.ERROR):
        return
    if time.monotonic() - turn.started_at < settings.TALORYS_REPLY_READY_SECONDS:
        return
    # Said in the log, as nothing else shows why a long reply got no notice.
    if turn.followers:  # counted before any await: they are still attached at the end
        log.info("Conversation %s: no reply-ready notice: a page follows it", turn.conversation_id)
        return
    try:
        if await mirror.followers_elsewhere(turn.message_id):
            log.info(
                "Conversation %s: no reply-ready notice: a page follows it in another process",
                turn.conversation_id,
            )
            return
        await db(_notify)(turn.conversation_id, turn.status)
    except Exception:  # the reply is saved; a lost notice must not look like a failed turn
        log.exception("Conversation %s: reply-ready notice not sent", turn.conversation_id)


async def page_follows(turn: LiveTurn) -> bool:
    """Whether a page follows the turn now, in this process or another (through Redis): the
    owner is watching it, so what it proposes is in front of them (approvals/telling.py)."""
    return bool(turn.followers) or await mirror.followers_elsewhere(turn.message_id) > 0


def _notify(conversation_id: int, status: str) -> None:
    conversation = Conversation.objects.live().filter(pk=conversation_id).first()
    if conversation is None:  # deleted meanwhile: nothing to come back to
        return
    name = conversation.title or "your conversation"
    if status == Message.Status.COMPLETE:
        title, body, kind = f"Your reply is ready: {name}", "Open it to read the reply.", "info"
    else:
        title = f"Your reply stopped: {name}"
        body, kind = "It ended with an error. Open it to see why and retry.", "error"
    notification_send(
        title=clip(title, Notification.TITLE_MAX),
        body=body,
        kind=Notification.Kind(kind),
        source=f"conversation:{conversation_id}",
    )
