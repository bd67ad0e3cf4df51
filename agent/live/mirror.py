"""With Redis, a running turn can be followed from any web process.

The process that runs a turn copies its events into a Redis stream (``XADD`` with the event's
seq as the entry id, so ``Last-Event-ID`` maps straight onto ``XREAD``), trimmed to about
``STREAM_EVENTS`` entries, and keeps a snapshot of the reply so far beside it (rewritten at
most every ``SNAPSHOT_SECONDS``, and at the start and the end; sooner in a burst of events, so
that the stream always holds the events after it). Another process that is asked
to attach reads the snapshot or the entries after the page's last event, then blocks on the
stream until the turn's end entry. Both keys expire soon after the turn ends; what is finished
is read from the database.

Redis is help, never a dependency of the turn: the copy is written by a task of its own from a
bounded queue, and a Redis that fails or falls behind stops the copy (logged), not the turn.
A follower in another process then falls back to the database (attach.py): it sees the reply
once it is saved.

Followers in other processes say they are there in a sorted set (refreshed every
``PRESENCE_SECONDS``), which the turn reads at its end: a page attached anywhere means no
"Your reply is ready" notification (ready.py).
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import suppress
from typing import Any

import redis.asyncio as aioredis
from django.conf import settings
from redis.exceptions import RedisError

from agent.live.turns import _END, BUFFER_EVENTS, FOLLOWER_QUEUE, Event, LiveTurn

log = logging.getLogger(__name__)

STREAM_EVENTS = BUFFER_EVENTS * 4
SNAPSHOT_SECONDS = 0.25
KEEP_SECONDS = 3600  # while the turn runs (renewed with each write)
KEEP_AFTER_END_SECONDS = 120
PRESENCE_SECONDS = 5.0
BLOCK_MS = 2000

_clients: dict[asyncio.AbstractEventLoop, aioredis.Redis] = {}


def enabled() -> bool:
    return bool(settings.REDIS_URL)


def _client() -> aioredis.Redis:
    loop = asyncio.get_running_loop()
    for other in [key for key in _clients if key.is_closed()]:
        del _clients[other]
    if loop not in _clients:
        _clients[loop] = aioredis.Redis.from_url(
            settings.REDIS_URL, socket_timeout=BLOCK_MS / 1000 + 5, socket_connect_timeout=5
        )
    return _clients[loop]


def _keys(message_id: int) -> tuple[str, str, str]:
    base = f"talorys:turn:{message_id}"
    return f"{base}:events", f"{base}:snapshot", f"{base}:followers"


def _seq(entry_id: bytes | str) -> int:
    text = entry_id.decode() if isinstance(entry_id, bytes) else entry_id
    return int(text.split("-", 1)[0])


# --- the running turn's side -------------------------------------------------------------------


class _Writer:
    """Copies one turn's events into Redis, in batches, from a task of its own."""

    def __init__(self, turn: LiveTurn) -> None:
        self.turn = turn
        self.queue: asyncio.Queue[Event] = asyncio.Queue(maxsize=FOLLOWER_QUEUE)
        self.stopped = False
        self.snapshot_at = 0.0
        self.snapshot_seq = 0
        self.task = asyncio.get_running_loop().create_task(self.run(), name="turn-mirror")

    def put(self, event: Event) -> None:
        if self.stopped:
            return
        try:
            self.queue.put_nowait(event)
        except asyncio.QueueFull:
            self.stop("Redis falls behind the turn")

    def stop(self, why: str) -> None:
        if not self.stopped:
            log.warning(
                "Conversation %s: not copied to Redis any more: %s", self.turn.conversation_id, why
            )
        self.stopped = True
        self.task.cancel()

    async def run(self) -> None:
        events, snapshot, _ = _keys(self.turn.message_id)
        try:
            # The first snapshot before any event: a follower elsewhere always finds one.
            await _client().set(snapshot, json.dumps(self.turn.snapshot()), ex=KEEP_SECONDS)
            while True:
                batch = [await self.queue.get()]
                while not self.queue.empty():
                    batch.append(self.queue.get_nowait())
                await self.write(batch, events, snapshot)
                if batch[-1] is _END:
                    return
        except asyncio.CancelledError:
            raise
        except (RedisError, OSError) as error:
            self.stopped = True
            log.warning(
                "Conversation %s: not copied to Redis any more: %s",
                self.turn.conversation_id,
                error,
            )

    async def write(self, batch: list[Event], events: str, snapshot: str) -> None:
        ending = batch[-1] is _END
        pipe = _client().pipeline(transaction=False)
        for event in batch:
            if event is _END:
                entry = f"{self.turn.seq + 1}-0"
                pipe.xadd(events, {"e": json.dumps(_END)}, id=entry)
            else:
                entry = f"{event['id'].rsplit('.', 1)[1]}-0"
                pipe.xadd(
                    events,
                    {"e": json.dumps(event, default=str)},
                    id=entry,
                    maxlen=STREAM_EVENTS,
                    approximate=True,
                )
        now = time.monotonic()
        # Taken now, with no await since the batch was drained: it covers exactly the batch.
        # Also when half the stream has gone by since the last one: trimmed past its snapshot,
        # the stream would leave a follower elsewhere nothing to go on from (it would take the
        # same stale snapshot again and again until the next one).
        behind = self.turn.seq - self.snapshot_seq >= STREAM_EVENTS // 2
        if ending or behind or now - self.snapshot_at >= SNAPSHOT_SECONDS:
            self.snapshot_at, self.snapshot_seq = now, self.turn.seq
            pipe.set(snapshot, json.dumps(self.turn.snapshot(), default=str))
        keep = KEEP_AFTER_END_SECONDS if ending else KEEP_SECONDS
        pipe.expire(events, keep)
        pipe.expire(snapshot, keep)
        await pipe.execute()


def mirror_attach(turn: LiveTurn) -> None:
    """Copy ``turn``'s events into Redis when there is one (a publish hook)."""
    if enabled():
        turn.publish_hooks.append(_Writer(turn).put)


async def followers_elsewhere(message_id: int) -> int:
    """How many pages in other processes follow the turn now (0 without Redis, or when Redis
    does not answer)."""
    if not enabled():
        return 0
    _, _, followers = _keys(message_id)
    try:
        return int(await _client().zcount(followers, time.time() - 3 * PRESENCE_SECONDS, "+inf"))
    except (RedisError, OSError):
        return 0


# --- a follower in another process -------------------------------------------------------------


class Lost(Exception):
    """Redis cannot give the turn's events (down, or the copy stopped): follow the database."""


async def remote_follow(
    message_id: int, after: tuple[int, int] | None, finished: Callable[[], Awaitable[bool]]
) -> AsyncIterator[Event]:
    """The turn's events from the Redis copy: after ``after`` (or a snapshot), then live to its
    end. ``finished`` tells, when the stream has been quiet for a while, whether the reply is
    saved (then the caller reads it); raises Lost when Redis fails."""
    events, snapshot_key, followers = _keys(message_id)
    me = secrets.token_hex(8)
    client = _client()
    try:
        seen = after[1] if after is not None and after[0] == message_id else None
        backlog, seen = await _backlog(client, events, snapshot_key, seen)
        for event in backlog:
            yield event
        present_at = 0.0
        while True:
            if time.monotonic() - present_at >= PRESENCE_SECONDS:
                present_at = time.monotonic()
                await client.zadd(followers, {me: time.time()})
                await client.expire(followers, KEEP_SECONDS)
            answer: Any = await client.xread(
                {events: f"{seen}-0"}, block=BLOCK_MS, count=FOLLOWER_QUEUE
            )
            if not answer:
                if await finished():
                    raise Lost("the turn ended without its end entry")
                continue
            for entry_id, fields in answer[0][1]:
                if _seq(entry_id) != seen + 1:  # trimmed past us: start again from a snapshot
                    backlog, seen = await _backlog(client, events, snapshot_key, None)
                    for event in backlog:
                        yield event
                    break
                event = json.loads(fields[b"e"])
                if event["type"] == "end":
                    return
                seen += 1
                yield event
    except (RedisError, OSError) as error:
        raise Lost(str(error)) from error
    finally:
        with suppress(RedisError, OSError, asyncio.CancelledError):
            await asyncio.shield(client.zrem(followers, me))


async def _backlog(
    client: aioredis.Redis, events: str, snapshot_key: str, seen: int | None
) -> tuple[list[Event], int]:
    """The entries after ``seen`` when the stream still holds them all, else the snapshot; and
    the seq the follower has then seen."""
    if seen is not None:
        entries: Any = await client.xrange(
            events, min=f"{seen + 1}-0", max="+", count=FOLLOWER_QUEUE
        )
        if entries and _seq(entries[0][0]) == seen + 1:
            return _until_end([json.loads(fields[b"e"]) for _, fields in entries], seen)
        if not entries:  # nothing since: live from here
            return [], seen
    raw = await client.get(snapshot_key)
    if raw is None:
        raise Lost("no copy of this turn in Redis")
    snapshot: Event = json.loads(raw)
    return [snapshot], int(snapshot["id"].rsplit(".", 1)[1])


def _until_end(events: list[Event], seen: int) -> tuple[list[Event], int]:
    kept = []
    for event in events:
        if event["type"] == "end":
            break
        kept.append(event)
    return kept, seen + len(kept)
