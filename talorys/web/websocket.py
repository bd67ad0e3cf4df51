"""What stands in front of every WebSocket consumer (config/asgi.py): the origin check
(``origin_allowed``, talorys/web/origins.py, which says why), the answer to an unknown path, and
close frames from daphne for a socket it fails (``daphne_close_frames``: 1009 for a message past
its size limit).
"""

from __future__ import annotations

from typing import Any

from asgiref.typing import Scope as AsgiScope
from channels.generic.websocket import AsyncWebsocketConsumer

from talorys.web.origins import origin_allowed

# A consumer whose ``channel_layer_alias`` names no configured layer gets none (Channels'
# get_channel_layer answers None, and the consumer listens to its client only): for a socket no
# other process speaks to, which then neither waits on Redis nor fails with it.
WITHOUT_CHANNEL_LAYER = "talorys-without-channel-layer"
# The close code of a socket that cannot be served for now, after which the page reconnects with
# backoff: HTTP's 503 in the application's range, as 4401 is its 401 (accounts/auth.py). The
# registry's own 1013 "Try Again Later" cannot be sent: daphne's autobahn lets an application
# close with 1000 or 3000-4999 only.
WEBSOCKET_TRY_AGAIN_LATER = 4503
# The daphne and autobahn that daphne_close_frames was last read against.
CLOSE_FRAMES_CHECKED = {"daphne": "4.2.3", "autobahn": "26.10.2"}


class Refuse(AsyncWebsocketConsumer):
    """Closes the handshake before accepting it: the client sees HTTP 403."""

    channel_layer_alias = WITHOUT_CHANNEL_LAYER

    async def connect(self) -> None:
        await self.close()


class OwnOriginValidator:
    """ASGI middleware: WebSockets from another origin are refused before any consumer runs."""

    def __init__(self, application: Any) -> None:
        self.application = application
        self.refuse = Refuse.as_asgi()

    async def __call__(self, scope: AsgiScope, receive: Any, send: Any) -> Any:
        if scope["type"] == "websocket" and not origin_allowed(scope):
            return await self.refuse(scope, receive, send)
        return await self.application(scope, receive, send)


def daphne_close_frames() -> None:
    """Make daphne close a failing WebSocket with a close frame and its code, not a dropped TCP
    connection. Idempotent; a no-op without daphne.

    autobahn, under daphne, fails a connection "by drop" unless told otherwise: a message past
    daphne's limit (``--websocket-max-message-size``, 1 MiB) or a protocol violation cut the
    connection without a word, and the page could not tell it from a network fault. Without
    the drop it sends the close frame first (1009 "message too big", 1002...), waits for the
    client's for at most its closing handshake timeout (1 s), then drops. The hook is on
    daphne's WebSocketFactory: autobahn's ``resetProtocolOptions`` sets ``failByDrop`` when the
    factory is made, and daphne's ``setProtocolOptions`` call leaves it alone.
    (tests/agent/test_socket_frames.py fails when an upgrade changes either.)
    No public setting does it: daphne's WebSocket options (its command line, cli.py) are
    timeouts, pings and sizes, and server.py passes autobahn no ``failByDrop``; a test fails when
    the installed daphne or autobahn is not the one in CLOSE_FRAMES_CHECKED, to re-check this.
    """
    try:
        from daphne.ws_protocol import WebSocketFactory
    except ImportError:
        return
    if getattr(WebSocketFactory, "_talorys_close_frames", False):
        return
    reset = WebSocketFactory.resetProtocolOptions

    def reset_with_close_frames(self: Any) -> None:
        reset(self)
        self.failByDrop = False

    WebSocketFactory.resetProtocolOptions = reset_with_close_frames
    WebSocketFactory._talorys_close_frames = True
