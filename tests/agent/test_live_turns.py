"""LiveTurn and its followers without a model (agent/live/turns.py), and the Redis copy another
process follows (agent/live/mirror.py) on a real Redis."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import redis

from agent import services
from agent.live import mirror
from agent.live.turns import _END, BUFFER_EVENTS, FOLLOWER_QUEUE, LiveTurn
from tests.waiting import HANG_SECONDS

CONVERSATION, REPLY = 3, 70


def new_turn() -> LiveTurn:
    return LiveTurn(
        services.TurnStart(
            conversation_id=CONVERSATION,
            turn_id="turn",
            user_message_id=REPLY - 1,
            assistant_message_id=REPLY,
            text="count",
        )
    )


def say(turn: LiveTurn, *words: str) -> None:
    for word in words:
        turn.publish(
            {"type": "text", "conversation_id": CONVERSATION, "message_id": REPLY, "delta": word}
        )


def done(turn: LiveTurn) -> None:
    turn.publish(
        {
            "type": "done",
            "conversation_id": CONVERSATION,
            "message_id": REPLY,
            "status": "complete",
            "html": "<p>…</p>",
        }
    )


def words(count: int, start: int = 0) -> list[str]:
    return [f"w{n} " for n in range(start, start + count)]


def seqs(events: list[dict[str, Any]]) -> list[int]:
    return [int(event["id"].rsplit(".", 1)[1]) for event in events]


def test_the_backlog_after_a_last_event_id_in_the_buffer_is_the_events_after_it():
    turn = new_turn()
    say(turn, *words(10))

    backlog = turn.backlog((REPLY, 4))

    assert seqs(backlog) == list(range(5, 11))
    assert [event["delta"] for event in backlog] == words(6, start=4)
    assert turn.backlog((REPLY, 10)) == []  # seen it all: live from here


@pytest.mark.parametrize("after", [None, (REPLY, 3), (REPLY + 1, 300)])
def test_a_last_event_id_the_buffer_no_longer_reaches_gets_a_snapshot(after):
    turn = new_turn()
    say(turn, *words(BUFFER_EVENTS + 20))

    (snapshot,) = turn.backlog(after)

    assert snapshot["type"] == "snapshot"
    assert snapshot["id"] == f"{REPLY}.{BUFFER_EVENTS + 20}"
    assert snapshot["text"] == "".join(words(BUFFER_EVENTS + 20))
    assert snapshot["status"] == "streaming"
    # The oldest event the buffer still holds is enough: no snapshot.
    assert seqs(turn.backlog((REPLY, 20)))[0] == 21


async def test_a_follower_that_falls_behind_gets_a_snapshot_for_what_was_dropped():
    turn = new_turn()
    say(turn, "w0 ")
    following = turn.follow((REPLY, 0))
    assert (await anext(following))["delta"] == "w0 "  # attached now

    say(turn, *words(FOLLOWER_QUEUE + 50, start=1))  # the page reads nothing meanwhile
    (queued,) = turn.followers
    assert queued.queue.qsize() == 1  # memory stays bounded: only the marker waits

    snapshot = await anext(following)
    say(turn, "late ")
    after = await anext(following)
    await following.aclose()

    assert snapshot["type"] == "snapshot"
    assert snapshot["text"] == "".join(words(FOLLOWER_QUEUE + 51))
    assert seqs([snapshot, after]) == [FOLLOWER_QUEUE + 51, FOLLOWER_QUEUE + 52]
    assert after["delta"] == "late "
    assert not turn.followers


async def test_a_follower_in_step_gets_every_event_to_the_end():
    turn = new_turn()
    say(turn, "w0 ")
    following = turn.follow((REPLY, 0))
    received = [await anext(following)]
    say(turn, *words(FOLLOWER_QUEUE - 1, start=1))  # a full queue, not more
    done(turn)
    turn.end()
    received += [event async for event in following]

    assert seqs(received) == list(range(1, FOLLOWER_QUEUE + 2))
    assert received[-1]["type"] == "done"


async def test_following_a_turn_that_has_ended_gives_its_backlog_and_stops():
    turn = new_turn()
    say(turn, *words(5))
    done(turn)
    turn.end()

    from_start = [event async for event in turn.follow(None)]
    after_three = [event async for event in turn.follow((REPLY, 3))]
    after_all = [event async for event in turn.follow((REPLY, 6))]

    assert [event["type"] for event in from_start] == ["snapshot"]
    assert from_start[0]["status"] == "complete"
    assert from_start[0]["text"] == "".join(words(5))
    assert seqs(after_three) == [4, 5, 6]
    assert after_all == []
    assert not turn.followers


# --- the Redis copy ------------------------------------------------------------------------------


@pytest.fixture
def mirrored(settings, redis_url_for_tests, monkeypatch) -> str:
    """Turns copied into the test Redis, trimmed to about 10 entries (Redis trims whole nodes of
    100 entries: a few hundred events are trimmed for sure)."""
    settings.REDIS_URL = redis_url_for_tests
    monkeypatch.setattr(mirror, "STREAM_EVENTS", 10)
    return redis_url_for_tests


class Copied:
    """A turn copied into Redis, as the process that runs it does (run.py's hooks)."""

    def __init__(self, redis_url: str) -> None:
        self.turn = new_turn()
        mirror.mirror_attach(self.turn)
        self.redis = redis.Redis.from_url(redis_url)

    async def say(self, count: int, start: int = 0) -> None:
        """``count`` words, each batch written to the copy before the next (its queue holds
        FOLLOWER_QUEUE events)."""
        for first in range(start, start + count, 100):
            say(self.turn, *words(min(100, start + count - first), start=first))
            await self.written()

    async def written(self) -> None:
        key = f"talorys:turn:{REPLY}:events"
        while (
            not (last := self.redis.xrevrange(key, count=1)) or seq_of(last[0][0]) < self.turn.seq
        ):
            await asyncio.sleep(0.01)

    async def end(self) -> None:
        done(self.turn)
        self.turn.end()
        (put,) = self.turn.publish_hooks
        put(_END)
        await put.__self__.task  # the end entry is written

    def first_seq(self) -> int:
        return seq_of(self.redis.xrange(f"talorys:turn:{REPLY}:events", count=1)[0][0])


def seq_of(entry_id: bytes) -> int:
    return int(entry_id.split(b"-")[0])


async def never() -> bool:
    return False


async def test_a_follower_elsewhere_behind_a_trimmed_stream_starts_from_the_snapshot(mirrored):
    copied = Copied(mirrored)
    await copied.say(350)
    await copied.end()
    assert copied.first_seq() > 6  # what followed seq 5 is gone

    received = [event async for event in mirror.remote_follow(REPLY, (REPLY, 5), never)]

    assert [event["type"] for event in received] == ["snapshot"]
    assert received[0]["id"] == f"{REPLY}.351"
    assert received[0]["status"] == "complete"
    assert received[0]["text"] == "".join(words(350))


async def test_a_follower_elsewhere_in_the_stream_gets_the_entries_after_its_id(mirrored):
    copied = Copied(mirrored)
    await copied.say(30)
    await copied.end()

    received = [event async for event in mirror.remote_follow(REPLY, (REPLY, 20), never)]

    assert seqs(received) == list(range(21, 32))
    assert [event["type"] for event in received] == ["text"] * 10 + ["done"]


async def test_a_follower_elsewhere_is_kept_up_while_the_stream_is_trimmed(mirrored):
    copied = Copied(mirrored)
    await copied.say(5)
    following = mirror.remote_follow(REPLY, None, never)
    first = await anext(following)
    assert first["type"] == "snapshot"

    # The page reads nothing meanwhile; this process's copy goes on reading the stream.
    await copied.say(350, start=5)
    assert copied.first_seq() > seqs([first])[0] + 1
    await copied.say(1, start=355)
    await copied.end()
    rest = [event async for event in following]

    # Whatever came as events or as a fresh snapshot, the reply is whole and in order.
    text = first["text"]
    for event in rest:
        if event["type"] == "snapshot":
            text = event["text"]
        elif event["type"] == "text":
            text += event["delta"]
    assert text == "".join(words(356))
    # The end, as its event or in a snapshot taken after it.
    assert rest[-1]["type"] == "done" or rest[-1]["status"] == "complete"
    assert seqs(rest)[-1] == 357
    assert seqs(rest) == sorted(set(seqs(rest)))


async def test_many_pages_elsewhere_share_one_reader_and_all_see_the_turn_to_its_end(mirrored):
    copied = Copied(mirrored)
    await copied.say(3)
    pages = [mirror.remote_follow(REPLY, None, never) for _ in range(150)]
    firsts = [await anext(page) for page in pages]
    assert {first["text"] for first in firsts} == {"w0 w1 w2 "}
    assert len(mirror._relays) == 1  # one reader for the turn, not one connection per page

    await copied.say(2, start=3)
    await copied.end()
    rests = await asyncio.wait_for(
        asyncio.gather(*[collect(page) for page in pages]), timeout=HANG_SECONDS
    )

    for rest in rests:
        assert [event["type"] for event in rest] == ["text", "text", "done"]
        assert "".join(event["delta"] for event in rest[:2]) == "w3 w4 "


async def collect(page: Any) -> list[dict[str, Any]]:
    return [event async for event in page]
