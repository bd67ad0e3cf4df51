"""Live notifications for open pages: ``/ws/notifications/``.

Transport only. The owner's session authenticates the socket (the origin is checked in
talorys/asgi.py); the page then receives ``{"type": "notification", "notification": {...}}``
for each notification made while it is open (sent on commit by talorys/notifications/services.py; in embedded
mode, one made by another process is found by the process's watcher, see notify.watcher_join).
"""

from __future__ import annotations

from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from talorys.accounts.auth import (
    WEBSOCKET_SESSION_ENDED,
    WEBSOCKET_UNAUTHENTICATED,
    websocket_owner_ok,
)
from talorys.lib.errors import Unauthorized
from talorys.notifications import services as notify
from talorys.notifications.services import NOTIFICATIONS_GROUP


class NotificationConsumer(AsyncJsonWebsocketConsumer):
    async def connect(self) -> None:
        if not await database_sync_to_async(websocket_owner_ok)(self.scope):
            await self.close(code=WEBSOCKET_UNAUTHENTICATED)
            return
        await self.channel_layer.group_add(NOTIFICATIONS_GROUP, self.channel_name)
        # Embedded mode: this process watches for notifications that other processes make.
        self.watching = await notify.watcher_join(self.channel_layer)
        await self.accept()

    async def disconnect(self, code: int) -> None:
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
        # Before each delivery, not only at connect: the session may have ended since.
        if not await database_sync_to_async(websocket_owner_ok)(self.scope):
            await self.channel_layer.group_discard(NOTIFICATIONS_GROUP, self.channel_name)
            await self.send_json(
                {"type": "error", "code": Unauthorized.code, "message": WEBSOCKET_SESSION_ENDED}
            )
            await self.close(code=WEBSOCKET_UNAUTHENTICATED)
            return
        await self.send_json({"type": "notification", "notification": event["notification"]})
