"""Just enough of an asyncio WebSocket client for the load benchmark: the handshake, masked text
frames out, text frames in (pings answered). No library of the project's offers one: websockets
is not a dependency, and aiohttp only arrives with pywebpush."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import struct
from typing import Any


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


class WebSocket:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    @classmethod
    async def connect(cls, port: int, path: str, cookie: str) -> WebSocket:
        reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=2**22)
        key = base64.b64encode(os.urandom(16)).decode()
        writer.write(
            (
                f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                f"Origin: http://127.0.0.1:{port}\r\nCookie: {cookie}\r\n\r\n"
            ).encode()
        )
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError) as error:
            writer.close()
            raise Closed(None) from error
        status = int(head.split(b" ", 2)[1])
        if status != 101:
            writer.close()
            raise Refused(status)
        return cls(reader, writer)

    async def _write(self, opcode: int, payload: bytes) -> None:
        mask = os.urandom(4)
        length = len(payload)
        if length < 126:
            head = struct.pack("!BB", 0x80 | opcode, 0x80 | length)
        elif length < 2**16:
            head = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, length)
        else:
            head = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, length)
        # Client frames are masked (RFC 6455 5.3): XOR with the key repeated, as one big int.
        repeated = (mask * (length // 4 + 1))[:length]
        masked = (int.from_bytes(payload, "big") ^ int.from_bytes(repeated, "big")).to_bytes(
            length, "big"
        )
        self.writer.write(head + mask + masked)
        await self.writer.drain()

    async def send_json(self, message: dict[str, Any]) -> None:
        await self._write(0x1, json.dumps(message).encode())

    async def send_text(self, data: bytes) -> None:
        """``data`` as one text frame, as it is (oversized or not JSON: to test the server)."""
        await self._write(0x1, data)

    async def receive_json(self) -> dict[str, Any]:
        """The next text message; raises Closed when the socket ends."""
        parts: list[bytes] = []
        try:
            while True:
                first, second = await self.reader.readexactly(2)
                length = second & 0x7F
                if length == 126:
                    (length,) = struct.unpack("!H", await self.reader.readexactly(2))
                elif length == 127:
                    (length,) = struct.unpack("!Q", await self.reader.readexactly(8))
                payload = await self.reader.readexactly(length)
                opcode = first & 0x0F
                if opcode == 0x8:
                    raise Closed(struct.unpack("!H", payload[:2])[0] if payload else 1005)
                if opcode == 0x9:
                    await self._write(0xA, payload)
                    continue
                if opcode in (0x0, 0x1):
                    parts.append(payload)
                    if first & 0x80:
                        return json.loads(b"".join(parts))
        except (asyncio.IncompleteReadError, ConnectionError) as error:
            if isinstance(error, Closed):
                raise
            raise Closed(None) from error

    async def close(self) -> None:
        with contextlib.suppress(ConnectionError):
            await self._write(0x8, struct.pack("!H", 1000))
        self.writer.close()
        with contextlib.suppress(ConnectionError):
            await self.writer.wait_closed()
