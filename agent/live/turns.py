"""The turns this process runs, each independent of the connections that follow it.

``turn_run`` (run.py) registers each turn it starts here by conversation. Each event the turn
yields gets an id (``<reply id>.<seq>``), goes into a short ring buffer, and out to every
``Follower``. Closing a page, reloading or losing the network only drops a follower.

A follower that attaches late, or whose ``Last-Event-ID`` the buffer no longer covers, gets one
``snapshot`` (the reply so far) and then the live events after it; one that falls behind (its
queue is full) gets a fresh snapshot in place of what it missed. So what a turn holds is
bounded: the buffer (``BUFFER_EVENTS``), the reply's text and activity (which the turn saves in
the end anyway), and per attached page a queue of at most ``FOLLOWER_QUEUE`` events.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import AsyncIterator
from typing import Any

from agent import services
from agent.activity import ShownActivity

log = logging.getLogger(__name__)

BUFFER_EVENTS = 256  # the latest events kept for a follower that comes back with Last-Event-ID
FOLLOWER_QUEUE = 512  # events waiting for one slow page before it is given a snapshot instead

Event = dict[str, Any]
_END: Event = {"type": "end"}  # after the last event: the follower's stream ends
_LAGGED: Event = {"type": "lagged"}  # the follower missed events: send a snapshot


def event_id(message_id: int, seq: int) -> str:
    return f"{message_id}.{seq}"


def seq_of(event: Event) -> int:
    """The seq in an event's own id (``<reply id>.<seq>``)."""
    return int(event["id"].rsplit(".", 1)[1])


def parse_event_id(value: str | None) -> tuple[int, int] | None:
    """``(reply id, seq)`` of a ``Last-Event-ID``, or None when it is not one of ours."""
    if not value or len(value) > 40:
        return None
    reply, _, seq = value.strip().partition(".")
    if not (reply.isdigit() and seq.isdigit()):
        return None
    return int(reply), int(seq)


class Follower:
    """One attached page (or SSE client): its queue of events not yet sent."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[Event] = asyncio.Queue()
        self.lagged = False

    def put(self, event: Event) -> None:
        if self.lagged:
            return
        if self.queue.qsize() >= FOLLOWER_QUEUE:
            # A snapshot replaces what waits, so memory stays bounded however slow the page is.
            self.resync()
            return
        self.queue.put_nowait(event)

    def resync(self) -> None:
        """Drop what waits: the follower gets a snapshot of the reply so far next."""
        self.lagged = True
        while not self.queue.empty():
            self.queue.get_nowait()
        self.queue.put_nowait(_LAGGED)


class LiveTurn:
    """A running turn's events and what it has said so far, for whoever attaches."""

    def __init__(self, start: services.TurnStart) -> None:
        self.start = start
        self.conversation_id = start.conversation_id
        self.message_id = start.assistant_message_id
        self.seq = 0
        self.buffer: deque[Event] = deque(maxlen=BUFFER_EVENTS)
        self.parts: list[str] = []
        self.activity: list[ShownActivity] = []
        self.title: str | None = start.title
        self.status = "streaming"
        self.error_message = ""
        self.html = ""
        self.followers: set[Follower] = set()
        self.finished = False
        self.started_at = time.monotonic()
        self.task: asyncio.Task[None] | None = None
        self.publish_hooks: list[Any] = []  # the Redis mirror (mirror.py), when there is one

    def publish(self, event: Event) -> None:
        """A new event of the turn: numbered, kept and sent to every follower and hook."""
        self.seq += 1
        self.apply({**event, "id": event_id(self.message_id, self.seq)})

    def apply(self, event: Event) -> None:
        """An event with its id (numbered here, or by the process that runs the turn): what
        it says is added to the reply so far, and it goes out."""
        self.seq = seq_of(event)
        self._take(event)
        self.buffer.append(event)
        for follower in self.followers:
            follower.put(event)
        for hook in self.publish_hooks:
            hook(event)

    def _take(self, event: Event) -> None:
        kind = event["type"]
        if kind == "text":
            self.parts.append(event["delta"])
        elif kind == "tool":
            self.activity.append(event["activity"])
        elif kind == "title":
            self.title = event["title"]
        elif kind == "error":
            self.error_message = event["message"]
        elif kind == "done":
            self.status, self.html = event["status"], event["html"]

    def reset(self, snapshot: Event, events: list[Event]) -> None:
        """Start again from a snapshot and the events around it (a copy of a turn another
        process runs, mirror.py): the reply so far is the snapshot's, the buffer the events,
        and a follower already here gets a fresh snapshot in place of what it had not seen."""
        covered = seq_of(snapshot)
        self.parts, self.activity = [snapshot["text"]], list(snapshot["activity"])
        self.status, self.html = snapshot["status"], snapshot["html"]
        self.title, self.error_message = snapshot["title"], snapshot["error_message"]
        self.buffer.clear()
        self.seq = covered
        ended = False
        for event in events:
            if event["type"] == "end":
                ended = True
                break
            seq = seq_of(event)
            if seq > covered:
                self.seq = seq
                self._take(event)
            self.buffer.append(event)
        if self.buffer and seq_of(self.buffer[-1]) != self.seq:
            self.buffer.clear()  # they did not reach the latest: no use for a Last-Event-ID
        for follower in self.followers:
            follower.resync()
        if ended:
            self.end()

    def snapshot(self) -> Event:
        """The reply so far, as one event with the id of the latest one it covers."""
        return {
            "type": "snapshot",
            "id": event_id(self.message_id, self.seq),
            "conversation_id": self.conversation_id,
            "message_id": self.message_id,
            "user_message_id": self.start.user_message_id,
            "status": self.status,
            "error_message": self.error_message,
            "text": "".join(self.parts),
            "html": self.html,
            "activity": list(self.activity),
            "title": self.title,
        }

    def backlog(self, after: tuple[int, int] | None) -> list[Event]:
        """What a follower that has seen up to ``after`` needs before the live events: the
        buffered events after it, or a snapshot when the buffer no longer reaches back."""
        if after is not None and after[0] == self.message_id:
            seen = after[1]
            if seen >= self.seq:
                return []
            oldest = self.seq - len(self.buffer) + 1
            if seen + 1 >= oldest:
                return list(self.buffer)[seen + 1 - oldest :]
        return [self.snapshot()]

    async def follow(self, after: tuple[int, int] | None = None) -> AsyncIterator[Event]:
        """The turn's events after ``after`` (a snapshot first when None), then live to the end.
        The transport that started the turn follows it from ``(message_id, 0)``.

        The backlog is taken and the follower added with no await between them, so nothing is
        sent twice and nothing is missed."""
        follower = Follower()
        backlog = self.backlog(after)
        if self.finished:  # the backlog, then the end
            follower.queue.put_nowait(_END)
        self.followers.add(follower)
        try:
            for event in backlog:
                yield event
            while True:
                event = await follower.queue.get()
                if event is _END:
                    return
                if event is _LAGGED:
                    follower.lagged = False
                    event = self.snapshot()
                yield event
        finally:
            self.followers.discard(follower)

    def end(self) -> None:
        self.finished = True
        for follower in self.followers:
            follower.queue.put_nowait(_END)


_running: dict[int, LiveTurn] = {}


def register(turn: LiveTurn) -> None:
    _running[turn.conversation_id] = turn


def unregister(turn: LiveTurn) -> None:
    if _running.get(turn.conversation_id) is turn:
        del _running[turn.conversation_id]


def live_turn(conversation_id: int) -> LiveTurn | None:
    """The turn this process runs in that conversation, if any."""
    turn = _running.get(conversation_id)
    if turn is not None and turn.task is not None and turn.task.get_loop().is_closed():
        _running.pop(conversation_id, None)  # a loop that ended (tests run one per test)
        return None
    return turn
