"""Keeping every open page in step: one Channels group that each page's live socket is in.

Every page of the app holds the notifications socket (``/ws/notifications/``,
talorys/notifications/consumers.py), which joins ``PAGES_GROUP``. Code that changes something
another open page shows (a conversation renamed or deleted, a turn started, an approval
decided, a change reverted) calls ``pages_tell`` with what changed; once its transaction
commits, every open page receives ``{"type": "sync", ...}`` with those fields and brings itself
up to date (the chat page re-reads the conversation or attaches to its running reply, a card
asks for its approval's state).

It lives in lib so that any room can call it (the history platform sits below notifications).
With Redis the group spans processes; in embedded mode (one web process, the in-memory layer)
it reaches every page that process serves, which is every page. A channel layer that does not
answer costs a page its update, never the caller its change: the send is logged and dropped.
"""

from __future__ import annotations

import logging
from functools import partial
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

log = logging.getLogger(__name__)

# The name predates the sync messages: notifications were the group's first use.
PAGES_GROUP = "owner-notifications"


def pages_tell(what: str, **fields: Any) -> None:
    """Tell every open page that ``what`` changed (``"conversation"``, ``"approval"``,
    ``"change"``...), with the ids it needs to look again; sent once the current transaction
    commits (at once outside one). The fields must be JSON: a page receives
    ``{"type": "sync", "what": what, **fields}``."""
    transaction.on_commit(partial(_send, {"what": what, **fields}), robust=True)


def _send(sync: dict[str, Any]) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        async_to_sync(layer.group_send)(PAGES_GROUP, {"type": "page.sync", "sync": sync})
    except Exception as error:  # Redis away: the page catches up on its next look or a reload
        # A line, not a traceback: an outage is expected, and says so in the health report.
        log.warning("Could not tell open pages that %s changed: %r", sync["what"], error)
