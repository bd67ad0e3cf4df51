"""ASGI entry: HTTP through Django (``/mcp`` first, to the MCP server), WebSockets through Channels
(session auth, origin check)."""

import os
from typing import Any

from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# Static files are few and small; serving them in-process keeps the embedded install one command.
django_asgi_app = ASGIStaticFilesHandler(get_asgi_application())

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.urls import path, re_path  # noqa: E402

from agent.routing import websocket_urlpatterns  # noqa: E402
from config.mcp.http import McpRouter  # noqa: E402
from talorys.notifications.consumers import NotificationConsumer  # noqa: E402
from talorys.web.bodies import AsgiBodyLimit, daphne_guard  # noqa: E402
from talorys.web.websocket import OwnOriginValidator, Refuse, daphne_close_frames  # noqa: E402

# Oversized request bodies: 413 before they are read (talorys/web/bodies.py).
daphne_guard()
# A WebSocket that fails (an oversized message: 1009) is closed with a close frame, not dropped.
daphne_close_frames()

# Channels routes with Django's path(), whose stubs accept only views, while URLRouter's stubs
# want channels' own (type-check-only) pattern type: nothing typed satisfies both, so the list is
# Any and the two consumer routes below carry an ignore for the view-only ``path`` stub.
websocket_routes: list[Any] = [
    *websocket_urlpatterns,
    path("ws/notifications/", NotificationConsumer.as_asgi()),  # type: ignore[arg-type]
    # Anything else is refused (403), not a "No route found" 500.
    re_path(r"", Refuse.as_asgi()),  # type: ignore[arg-type]
]

application = ProtocolTypeRouter(
    {
        # /mcp: the MCP server (config/mcp/http.py), token-only; everything else is Django's.
        "http": AsgiBodyLimit(McpRouter(django_asgi_app)),
        # Only the app's own origin (talorys/web/websocket.py): any page's handshake carries the cookie.
        "websocket": OwnOriginValidator(AuthMiddlewareStack(URLRouter(websocket_routes))),
    }
)
