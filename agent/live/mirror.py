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

In a process that does not run the turn, one relay per turn reads the stream (``remote_follow``)
into a LiveTurn of its own, which that process's pages follow as they follow a local one. While
pages follow it, the relay says so in a sorted set (refreshed every ``PRESENCE_SECONDS``), which
the turn reads at its end: a page attached anywhere means no "Your reply is ready" notification
(ready.py).
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

from agent import services
from agent.live.turns import _END, BUFFER_EVENTS, FOLLOWER_QUEUE, Event, LiveTurn, seq_of

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

    def stop(self, why: object) -> None:
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
        except (RedisError, OSError) as error:
            self.stop(error)

    async def write(self, batch: list[Event], events: str, snapshot: str) -> None:
        ending = batch[-1] is _END
        pipe = _client().pipeline(transaction=False)
        for event in batch:
            seq = self.turn.seq + 1 if event is _END else seq_of(event)
            pipe.xadd(
                events,
                {"e": json.dumps(event, default=str)},
                id=f"{seq}-0",
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


# --- followers in another process ---------------------------------------------------------------


class Lost(Exception):
    """Redis cannot give the turn's events (down, or the copy stopped): follow the database."""


RELAY_IDLE_SECONDS = 5.0  # a relay with no page left stops after this long

_relays: dict[int, _Relay] = {}


class _Relay:
    """This process's copy of a turn another process runs: one reader of the Redis stream per
    turn, however many pages here follow it (each page's own blocking read took a connection
    of redis-py's pool, whose 100 ran out: the 101st page got its snapshot and nothing after).

    The copy is a LiveTurn fed from the stream instead of the model, so pages follow it exactly
    as they follow a turn of this process: the buffer, the bounded queues, the snapshots.
    """

    def __init__(self, message_id: int, finished: Callable[[], Awaitable[bool]]) -> None:
        self.message_id = message_id
        self.finished = finished
        self.turn: LiveTurn | None = None
        self.lost = False
        self.ready = asyncio.Event()
        self.task = asyncio.get_running_loop().create_task(self.run(), name="turn-relay")

    async def run(self) -> None:
        events, _, followers = _keys(self.message_id)
        me = secrets.token_hex(8)
        client = _client()
        try:
            await self.seed(client)
            await self.relay(client, events, followers, me)
        except (RedisError, OSError, Lost) as error:
            log.warning("Turn %s: the Redis copy is lost: %s", self.message_id, error)
            self.lost = True
        finally:
            if _relays.get(self.message_id) is self:
                del _relays[self.message_id]
            if self.turn is not None:
                self.turn.end()
            self.ready.set()
            with suppress(RedisError, OSError, asyncio.CancelledError):
                await asyncio.shield(client.zrem(followers, me))

    async def seed(self, client: aioredis.Redis) -> None:
        """The copy starts from the snapshot and the entries still in the stream (so a page
        coming back with a Last-Event-ID they hold gets exactly the events after it)."""
        snapshot, entries = await _snapshot_and_entries(client, self.message_id)
        if self.turn is None:
            self.turn = LiveTurn(
                services.TurnStart(
                    conversation_id=snapshot["conversation_id"],
                    turn_id="",
                    user_message_id=snapshot["user_message_id"],
                    assistant_message_id=self.message_id,
                    text="",
                    title=snapshot["title"],
                )
            )
        self.turn.reset(snapshot, entries)
        self.ready.set()

    async def relay(self, client: aioredis.Redis, events: str, followers: str, me: str) -> None:
        assert self.turn is not None
        turn = self.turn
        present_at = idle_since = 0.0
        while not turn.finished:
            now = time.monotonic()
            if not turn.followers:
                idle_since = idle_since or now
                if now - idle_since >= RELAY_IDLE_SECONDS:
                    return
            else:
                idle_since = 0.0
                if now - present_at >= PRESENCE_SECONDS:  # "a page follows it" (ready.py)
                    present_at = now
                    await client.zadd(followers, {me: time.time()})
                    await client.expire(followers, KEEP_SECONDS)
            answer: Any = await client.xread(
                {events: f"{turn.seq}-0"}, block=BLOCK_MS, count=FOLLOWER_QUEUE
            )
            if not answer:
                if await self.finished():
                    raise Lost("the turn ended without its end entry")
                continue
            for entry_id, fields in answer[0][1]:
                if _seq(entry_id) != turn.seq + 1:  # trimmed past the copy: start again
                    await self.seed(client)
                    break
                event = json.loads(fields[b"e"])
                if event["type"] == "end":
                    turn.end()
                    return
                turn.apply(event)


async def _snapshot_and_entries(
    client: aioredis.Redis, message_id: int
) -> tuple[Event, list[Event]]:
    """The snapshot and the stream's entries, the entries running on from before the snapshot
    to the latest without a gap (read again when a trim came between the two reads)."""
    events, snapshot_key, _ = _keys(message_id)
    for _ in range(3):
        raw = await client.get(snapshot_key)
        if raw is None:
            raise Lost("no copy of this turn in Redis")
        snapshot: Event = json.loads(raw)
        covered = seq_of(snapshot)
        found: Any = await client.xrange(events, min="-", max="+")
        entries = [json.loads(fields[b"e"]) for _, fields in found]
        seqs = [_seq(entry_id) for entry_id, _ in found]
        if not seqs or (seqs[0] <= covered + 1 and seqs == list(range(seqs[0], seqs[-1] + 1))):
            return snapshot, entries
    raise Lost("the stream moves on faster than it can be read")


async def remote_follow(
    message_id: int, after: tuple[int, int] | None, finished: Callable[[], Awaitable[bool]]
) -> AsyncIterator[Event]:
    """The turn's events from this process's copy of it (one per turn, made by the first page
    that asks): after ``after`` (or a snapshot), then live to its end. ``finished`` tells, when
    the stream has been quiet for a while, whether the reply is saved; raises Lost when Redis
    fails or the copy stops, so the caller reads the database."""
    relay = _relays.get(message_id)
    if relay is None or relay.task.get_loop().is_closed():
        relay = _relays[message_id] = _Relay(message_id, finished)
    await relay.ready.wait()
    if relay.turn is None:
        raise Lost("no copy of this turn in Redis")
    async for event in relay.turn.follow(after):
        yield event
    if relay.lost:
        raise Lost("the Redis copy stopped")
