"""The pages of benchmarks/reattach.py: a chat page as the browser opens it (a new /ws/chat/
socket with the session cookie and the Origin header, then the ``attach`` frame), reloaded
mid-reply, and an SSE client doing the same through GET /api/conversations/{id}/stream.

Every re-attached page also checks what it was given: the snapshot's text and the live deltas
after it must be a prefix of the reply the fake model streams (nothing missed, nothing twice).
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any

import httpx

from benchmarks._load_clients import Session
from benchmarks._websocket import WebSocket

READ_TIMEOUT = 30.0
# Live deltas each re-attached page reads after its first text, to check the continuation.
FOLLOW_DELTAS = 2


class Garbled(RuntimeError):
    """A re-attached page was given text that is not the reply's next part."""


def carries_text(event: dict[str, Any]) -> bool:
    """The first event a reloaded page can show text from: a snapshot with text, or a delta."""
    kind = event.get("type")
    return (kind == "snapshot" and bool(event.get("text"))) or kind == "text"


def text_of(event: dict[str, Any]) -> str:
    return str(event.get("text") if event.get("type") == "snapshot" else event.get("delta", ""))


def check_prefix(text: str, reply: str, where: str) -> None:
    if not reply.startswith(text):
        raise Garbled(f"{where}: {text[-60:]!r} is not the reply's beginning")


@dataclass
class Reload:
    """One reload as the page saw it, in milliseconds from the start of the reconnect."""

    handshake: float  # the new socket answered 101 (or the SSE response's headers came)
    first_text: float  # the first event carrying text
    text: str  # the text it carried


async def receive(ws: WebSocket) -> dict[str, Any]:
    return await asyncio.wait_for(ws.receive_json(), READ_TIMEOUT)


async def start_turn(session: Session, text: str) -> tuple[WebSocket, int, list[dict[str, Any]]]:
    """A page that sends ``text`` in a new conversation, read up to its first text: the page,
    the conversation's id and the events read."""
    ws = await WebSocket.connect(session.port, "/ws/chat/", session.cookie)
    await ws.send_json({"type": "send", "text": text})
    conversation_id = None
    events = []
    while True:
        event = await receive(ws)
        events.append(event)
        if event.get("type") == "start":
            conversation_id = int(event["conversation_id"])
        elif event.get("type") == "error":
            raise RuntimeError(f"the turn was refused: {event}")
        elif event.get("type") == "text" and conversation_id is not None:
            return ws, conversation_id, events


async def attach_page(port: int, cookie: str, conversation_id: int) -> tuple[WebSocket, Reload]:
    """A reloaded page: a new socket, the attach frame, read up to the first event carrying
    text; the socket is left open on it."""
    began = time.monotonic()
    ws = await WebSocket.connect(port, "/ws/chat/", cookie)
    shaken = time.monotonic()
    await ws.send_json({"type": "attach", "conversation_id": conversation_id})
    while True:
        event = await receive(ws)
        if event.get("type") == "error":
            raise RuntimeError(f"attach refused: {event}")
        if carries_text(event):
            done = time.monotonic()
            return ws, Reload((shaken - began) * 1000, (done - began) * 1000, text_of(event))


async def follow_deltas(ws: WebSocket, text: str, reply: str, count: int) -> str:
    """Read ``count`` more deltas after ``text``, checked against the reply."""
    while count:
        event = await receive(ws)
        if event.get("type") == "text":
            text += event["delta"]
            count -= 1
        elif event.get("type") in ("done", "error"):
            raise RuntimeError(f"the turn ended during the reloads: {event}")
    check_prefix(text, reply, "after a re-attach")
    return text


async def websocket_reloads(
    page: WebSocket, session: Session, conversation_id: int, reply: str, count: int
) -> list[Reload]:
    """``count`` reloads of ``page`` (which follows the turn): it closes mid-reply and a new
    page attaches on ``session``'s server, reads a few deltas, and is reloaded in turn."""
    reloads = []
    for _ in range(count):
        await page.close()
        page, reload = await attach_page(session.port, session.cookie, conversation_id)
        await follow_deltas(page, reload.text, reply, FOLLOW_DELTAS)
        reloads.append(reload)
    await page.close()
    return reloads


async def sse_first_text(session: Session, conversation_id: int, reply: str) -> Reload:
    """One SSE re-attach on a new connection, timed to its first event carrying text."""
    # A new client, so a new connection as after a reload; made before the clock starts (its
    # TLS context alone takes milliseconds, client-side).
    async with httpx.AsyncClient(
        base_url=session.url,
        cookies=session.cookies,
        headers={"Origin": session.url},
        timeout=READ_TIMEOUT,
    ) as client:
        return await _sse_read(client, conversation_id, reply)


async def _sse_read(client: httpx.AsyncClient, conversation_id: int, reply: str) -> Reload:
    began = time.monotonic()
    async with client.stream("GET", f"/api/conversations/{conversation_id}/stream") as response:
        shaken = time.monotonic()
        if response.status_code != 200:
            raise RuntimeError(f"GET stream: {response.status_code} {(await response.aread())!r}")
        async for line in response.aiter_lines():
            if line.startswith("data: "):
                event = json.loads(line.removeprefix("data: "))
                if carries_text(event):
                    done = time.monotonic()
                    text = text_of(event)
                    check_prefix(text, reply, "SSE re-attach")
                    return Reload((shaken - began) * 1000, (done - began) * 1000, text)
    raise RuntimeError("the SSE stream ended with no text")


async def cancel_turn(page: WebSocket, conversation_id: int) -> str:
    """Cancel the turn from ``page`` and read to its ``done``: the reply's status."""
    await page.send_json({"type": "cancel", "conversation_id": conversation_id})
    while True:
        event = await receive(page)
        if event.get("type") == "done":
            return str(event.get("status"))


@dataclass
class Pages:
    """The memory phase's attached pages and what they received."""

    sockets: list[WebSocket] = field(default_factory=list)
    snapshots: int = 0  # pages whose snapshot came
    live: int = 0  # pages that received a live delta after it
    done: int = 0  # pages that read the turn to its end (``done``, or a final snapshot)
    errors: list[str] = field(default_factory=list)  # error events, as pages received them
    received_bytes: int = 0
    tasks: list[asyncio.Task[None]] = field(default_factory=list)


async def open_sockets(session: Session, count: int, at_once: int = 20) -> list[WebSocket]:
    """``count`` new /ws/chat/ sockets (``at_once`` handshakes at a time), following nothing."""
    gate = asyncio.Semaphore(at_once)

    async def one() -> WebSocket:
        async with gate:
            return await WebSocket.connect(session.port, "/ws/chat/", session.cookie)

    return list(await asyncio.gather(*(one() for _ in range(count))))


def attach_all(pages: Pages, conversation_id: int) -> None:
    """Send the attach frame on every socket; a task per page reads its events to ``done``."""

    async def read(ws: WebSocket) -> None:
        await ws.send_json({"type": "attach", "conversation_id": conversation_id})
        state = "attaching"  # then "snapshot" (its snapshot came), then "live"
        while True:
            event = await asyncio.wait_for(ws.receive_json(), 120)
            pages.received_bytes += len(json.dumps(event))
            kind = event.get("type")
            if kind == "snapshot" and state == "attaching":
                state = "snapshot"
                pages.snapshots += 1
            elif kind == "text" and state == "snapshot":
                state = "live"
                pages.live += 1
            elif kind == "done" or (kind == "snapshot" and event.get("status") != "streaming"):
                # A final snapshot ends an attach too: the reply was saved before it could
                # follow the rest (attach.py reads it from the database).
                pages.done += 1
                return
            elif kind == "error":
                pages.errors.append(f"{event.get('code')}: {event.get('message')}")

    pages.tasks = [asyncio.create_task(read(ws)) for ws in pages.sockets]


async def wait_until(check: Any, seconds: float, what: str, pages: Pages | None = None) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            if pages is not None:
                what += (
                    f" ({len(pages.sockets)} pages: {pages.snapshots} snapshots, {pages.live} "
                    f"live, {pages.done} done; errors: {sorted(set(pages.errors))[:3]})"
                )
            raise RuntimeError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)
