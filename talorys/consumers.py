"""Live notifications for open pages: ``/ws/notifications/``.

Transport only. The owner's session authenticates the socket (the origin is checked in
talorys/asgi.py); the page then receives ``{"type": "notification", "notification": {...}}``
for each notification made while it is open (sent on commit by talorys/notify.py).
"""

from __future__ import annotations

from typing import Any

from channels.generic.websocket import AsyncJsonWebsocketConsumer

from talorys.notify import NOTIFICATIONS_GROUP

UNAUTHENTICATED = 4401


class NotificationConsumer(AsyncJsonWebsocketConsumer):
    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=UNAUTHENTICATED)
            return
        await self.channel_layer.group_add(NOTIFICATIONS_GROUP, self.channel_name)
        await self.accept()

    async def disconnect(self, code: int) -> None:
        await self.channel_layer.group_discard(NOTIFICATIONS_GROUP, self.channel_name)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        """The page has nothing to say on this socket; marking read goes through the API."""

    async def notification_created(self, event: dict[str, Any]) -> None:
        await self.send_json({"type": "notification", "notification": event["notification"]})
