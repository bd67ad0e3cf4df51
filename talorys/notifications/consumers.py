"""Live notifications for open pages: ``/ws/notifications/``.

Transport only. The owner's session authenticates the socket (the origin is checked in
config/asgi.py); the page then receives ``{"type": "notification", "notification": {...}}``
for each notification made while it is open, the same with ``"updated": true`` when one
is rewritten (an approval it announced was decided; sent on commit by
talorys/notifications/services.py; in embedded mode, one made by another process is found by the
process's watcher, see notify.watcher_join), and ``{"type": "sync", "what", ...}`` when
something another page shows changed (talorys/web/live.py).
While the channel layer (Redis) does not answer, the socket is closed with 4503, "try again
later": the page reconnects with backoff and reads its unread count from the API meanwhile.
"""

from __future__ import annotations

import logging
from contextlib import suppress
from typing import Any, Literal

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from redis.exceptions import RedisError

from talorys.accounts.auth import (
    WEBSOCKET_SESSION_ENDED,
    WEBSOCKET_UNAUTHENTICATED,
    websocket_owner_ok,
)
from talorys.lib.errors import Unauthorized
from talorys.notifications import services as notify
from talorys.notifications.services import NOTIFICATIONS_GROUP
from talorys.web.websocket import WEBSOCKET_TRY_AGAIN_LATER

log = logging.getLogger(__name__)


class NotificationConsumer(AsyncJsonWebsocketConsumer):
    # Where the handshake is: what is left to send when the channel layer fails.
    stage: Literal["connecting", "open", "closed"] = "connecting"

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        """The consumer as Channels runs it (its ASGI callable), where a channel layer that does
        not answer, at the connect (joining the group) or later (waiting on the socket's
        channel), closes the socket with 4503 instead of failing the consumer: the handshake
        answered 500, and an open socket dropped with 1011 and a traceback."""
        try:
            await super().__call__(scope, receive, send)
        except RedisError:
            log.warning("Notifications socket closed: the channel layer (Redis) does not answer")
            if self.stage == "closed":
                return
            if self.stage == "connecting":
                await send({"type": "websocket.accept"})
            await send({"type": "websocket.close", "code": WEBSOCKET_TRY_AGAIN_LATER})

    async def connect(self) -> None:
        if not await database_sync_to_async(websocket_owner_ok)(self.scope):
            self.stage = "closed"
            await self.close(code=WEBSOCKET_UNAUTHENTICATED)
            return
        await self.channel_layer.group_add(NOTIFICATIONS_GROUP, self.channel_name)
        # Embedded mode: this process watches for notifications that other processes make.
        self.watching = await notify.watcher_join(self.channel_layer)
        await self.accept()
        self.stage = "open"

    async def disconnect(self, code: int) -> None:
        self.stage = "closed"
        # With Redis down the membership cannot be dropped now: it expires with the group.
        with suppress(RedisError):
            await self.channel_layer.group_discard(NOTIFICATIONS_GROUP, self.channel_name)
        if getattr(self, "watching", False):
            self.watching = False
            await notify.watcher_leave()

    async def receive(
        self, text_data: str | None = None, bytes_data: bytes | None = None, **kwargs: Any
    ) -> None:
        """The page has nothing to say on this socket; marking read goes through the API.

        Frames are not even parsed: the base class's JSON decoding closed the socket with 1011
        on a binary or deeply nested frame."""

    async def notification_created(self, event: dict[str, Any]) -> None:
        if await self._still_signed_in():
            await self.send_json({"type": "notification", "notification": event["notification"]})

    async def notification_updated(self, event: dict[str, Any]) -> None:
        """A notification the page may already show now says something else (an approval it
        asked about was decided): the page puts it in place of the old one, not as news."""
        if await self._still_signed_in():
            await self.send_json(
                {"type": "notification", "notification": event["notification"], "updated": True}
            )

    async def _still_signed_in(self) -> bool:
        """Checked before each delivery, not only at connect: the session may have ended since,
        and then the socket is told so and closed."""
        if await database_sync_to_async(websocket_owner_ok)(self.scope):
            return True
        await self.channel_layer.group_discard(NOTIFICATIONS_GROUP, self.channel_name)
        await self.send_json(
            {"type": "error", "code": Unauthorized.code, "message": WEBSOCKET_SESSION_ENDED}
        )
        self.stage = "closed"
        await self.close(code=WEBSOCKET_UNAUTHENTICATED)
        return False

    async def page_sync(self, event: dict[str, Any]) -> None:
        """Something another open page shows changed (talorys/web/live.py): the page looks
        again. Only ids and kinds travel here, so no session check per message: what the page
        then reads goes through the API, which checks it."""
        await self.send_json({"type": "sync", **event["sync"]})
