"""How many attaches API tokens may hold open (agent/live/slots.py): per token, all tokens
together, shared through Redis by every web process, counted in this process while Redis is away.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import httpx
import pytest

from agent.live.slots import RETRY_AFTER_SECONDS, Slots, slots_held, slots_release, slots_take
from agent.models import Conversation
from talorys.accounts.services import api_token_create
from talorys.lib.errors import RateLimited
from tests.waiting import HANG_SECONDS


def _refusal(holder: str) -> RateLimited:
    with pytest.raises(RateLimited) as refused:
        slots_take(holder)
    return refused.value


def test_a_token_holds_at_most_its_cap_and_a_refusal_holds_nothing(settings):
    settings.ATTACHES_PER_TOKEN = 3
    held = [slots_take("token:tal_aaaaaaaa") for _ in range(3)]

    refused = _refusal("token:tal_aaaaaaaa")
    assert "3 attaches" in refused.message
    assert refused.retry_after == RETRY_AFTER_SECONDS
    slots_take("token:tal_bbbbbbbb")  # another token has its own

    slots_release(held[0])
    slots_take("token:tal_aaaaaaaa")  # the slot given back, and no other
    assert "3 attaches" in _refusal("token:tal_aaaaaaaa").message


def test_tokens_together_hold_at_most_the_total(settings):
    settings.ATTACHES_PER_TOKEN = 3
    settings.TOKEN_ATTACHES = 4
    first = [slots_take("token:tal_aaaaaaaa") for _ in range(3)]
    slots_take("token:tal_bbbbbbbb")

    refused = _refusal("token:tal_bbbbbbbb")
    assert "API tokens have 4 attaches" in refused.message
    # The refused attach gave back the token's own slot it had taken: once one of all tokens'
    # slots is free, the token has two more of its own.
    slots_release(first[0])
    slots_take("token:tal_bbbbbbbb")
    slots_release(first[1])
    slots_take("token:tal_bbbbbbbb")


def test_of_concurrent_attaches_exactly_the_cap_get_a_slot(settings):
    settings.ATTACHES_PER_TOKEN = 8
    start = threading.Barrier(40)
    outcomes: list[Slots | None] = []

    def attach() -> None:
        start.wait(HANG_SECONDS)
        try:
            outcomes.append(slots_take("token:tal_aaaaaaaa"))
        except RateLimited:
            outcomes.append(None)

    threads = [threading.Thread(target=attach) for _ in range(40)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(HANG_SECONDS)
    held = [slots for slots in outcomes if slots is not None]
    assert (len(outcomes), len(held)) == (40, 8)
    assert len({slots.keys[0] for slots in held}) == 8


def test_a_slot_that_expired_and_was_taken_again_is_left_to_its_new_holder(settings):
    settings.ATTACHES_PER_TOKEN = 1
    old = slots_take("token:tal_aaaaaaaa")
    from django.core.cache import cache

    cache.delete_many(list(old.keys))  # as after SLOT_SECONDS without renewal (a dead process)
    slots_take("token:tal_aaaaaaaa")

    slots_release(old)  # the old holder's late release
    _refusal("token:tal_aaaaaaaa")


async def test_an_attach_that_ends_or_is_cancelled_gives_its_slot_back(settings):
    settings.ATTACHES_PER_TOKEN = 1

    async def attach(waiting: asyncio.Event) -> None:
        async with slots_held(slots_take("token:tal_aaaaaaaa")):
            await waiting.wait()

    ends = asyncio.Event()
    ends.set()
    await attach(ends)
    hangs_up = asyncio.ensure_future(attach(asyncio.Event()))  # a client that goes away
    await asyncio.sleep(0)
    with pytest.raises(RateLimited):
        slots_take("token:tal_aaaaaaaa")
    hangs_up.cancel()
    with pytest.raises(asyncio.CancelledError):
        await hangs_up
    slots_take("token:tal_aaaaaaaa")


@pytest.fixture
def redis_cache(settings, redis_url_for_tests) -> str:
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": redis_url_for_tests,
        }
    }
    return redis_url_for_tests


@pytest.mark.redis
def test_slots_live_in_redis_for_every_process(settings, redis_cache):
    settings.ATTACHES_PER_TOKEN = 2
    held = [slots_take("token:tal_aaaaaaaa") for _ in range(2)]
    import redis

    stored = redis.Redis.from_url(redis_cache).keys("*attach-slot:*")
    assert len(stored) == 4  # two of the token's, two of all tokens'
    for slots in held:
        slots_release(slots)
    assert redis.Redis.from_url(redis_cache).keys("*attach-slot:*") == []


def test_while_redis_is_away_the_cap_holds_in_this_process(settings, unused_tcp_port):
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": f"redis://127.0.0.1:{unused_tcp_port}/0",  # nothing listens there
        }
    }
    settings.ATTACHES_PER_TOKEN = 2
    held = [slots_take("token:tal_cccccccc") for _ in range(2)]
    assert "2 attaches" in _refusal("token:tal_cccccccc").message
    for slots in held:
        slots_release(slots)
    slots_release(slots_take("token:tal_cccccccc"))


# --- a live daphne counts the slots another process holds in the same Redis ----------------------


@pytest.fixture
def live_server_env(redis_live_env) -> dict[str, str]:
    return redis_live_env


@pytest.fixture
def token_attach(live_server_url, owner) -> Iterator[tuple[str, str]]:
    conversation = Conversation.objects.create(title="Finished")
    _, raw = api_token_create(user=owner, name="script")
    yield f"/api/conversations/{conversation.pk}/stream", raw


@pytest.mark.django_db(transaction=True)
@pytest.mark.postgres
@pytest.mark.redis
def test_a_daphne_refuses_an_attach_whose_slots_another_process_holds(
    settings, redis_cache, live_server_url, token_attach
):
    path, raw = token_attach
    prefix = raw[:12]
    # This test process stands for another web process: it holds all of the token's slots.
    held = [slots_take(f"token:{prefix}") for _ in range(settings.ATTACHES_PER_TOKEN)]
    headers = {"Authorization": f"Bearer {raw}"}
    with httpx.Client(base_url=live_server_url, headers=headers, timeout=HANG_SECONDS) as http:
        refused = http.get(path)
        for slots in held:
            slots_release(slots)
        answered = http.get(path)  # a conversation with no reply: one snapshot, and it ends

    assert refused.status_code == 429, refused.text
    assert refused.json()["error"]["code"] == "RATE_LIMITED"
    assert refused.headers["Retry-After"] == str(RETRY_AFTER_SECONDS)
    assert answered.status_code == 200
    assert "event: snapshot" in answered.text
