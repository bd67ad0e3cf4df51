"""The WebSocket client of the benchmarks and the socket tests: the websockets library (the
most used Python client), with the session's cookie and the page's origin on the handshake, JSON
text frames, and the two ends the tests read (Refused, Closed). No keepalive pings of its own
(a loaded daphne answering late must not close the socket) and no size limit on what comes in."""

from __future__ import annotations

import json
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus


class Refused(Exception):
    """The handshake was answered with an HTTP status instead of 101."""

    def __init__(self, status: int) -> None:
        super().__init__(f"handshake answered {status}")
        self.status = status


class Closed(ConnectionError):
    """The server closed the socket (``code``) or the connection dropped (``code`` None)."""

    def __init__(self, code: int | None) -> None:
        super().__init__(f"closed ({code})" if code else "connection dropped")
        self.code = code


def _closed(error: ConnectionClosed) -> Closed:
    return Closed(error.rcvd.code if error.rcvd else None)


class WebSocket:
    def __init__(self, connection: ClientConnection) -> None:
        self.connection = connection

    @classmethod
    async def connect(cls, port: int, path: str, cookie: str) -> WebSocket:
        try:
            connection = await connect(
                f"ws://127.0.0.1:{port}{path}",
                origin=f"http://127.0.0.1:{port}",  # type: ignore[arg-type]
                additional_headers={"Cookie": cookie},
                compression=None,
                ping_interval=None,
                open_timeout=60,
                max_size=None,
            )
        except InvalidStatus as error:
            raise Refused(error.response.status_code) from error
        except (InvalidHandshake, OSError, EOFError) as error:
            raise Closed(None) from error
        return cls(connection)

    async def send_json(self, message: dict[str, Any]) -> None:
        await self.send_text(json.dumps(message).encode())

    async def send_text(self, data: bytes) -> None:
        """``data`` as one text frame, as it is (oversized or not JSON: to test the server)."""
        try:
            await self.connection.send(data, text=True)
        except ConnectionClosed as error:
            raise _closed(error) from error

    async def receive_json(self) -> dict[str, Any]:
        """The next text message; raises Closed when the socket ends."""
        try:
            return json.loads(await self.connection.recv())
        except ConnectionClosed as error:
            raise _closed(error) from error

    async def close(self) -> None:
        await self.connection.close()
