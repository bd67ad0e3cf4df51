"""WebSocket routes, mounted by config/asgi.py behind the origin check and session auth."""

from typing import Any

from django.urls import path

from agent.consumers import ChatConsumer

# Channels routes ASGI apps with Django's path(), whose stubs accept only views (as in
# config/asgi.py): nothing typed satisfies both, hence Any and the ignore.
websocket_urlpatterns: list[Any] = [
    path("ws/chat/", ChatConsumer.as_asgi()),  # type: ignore[arg-type]
]
