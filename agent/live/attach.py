"""Attach: a conversation's running reply, from wherever it runs, or its current state.

``attach`` is what both transports answer (``GET /api/conversations/{id}/stream`` and the chat
socket's ``attach`` frame). It looks, in order:

1. in this process (turns.py): the events after the page's ``Last-Event-ID``, or a snapshot of
   the reply so far, then live to ``done`` (and a generated title after it);
2. with Redis, in the copy of a turn another process runs (mirror.py), the same way;
3. in the database: a conversation with no running turn answers at once with one ``snapshot``
   of its latest reply (its final text, rendered, and status) and the stream ends.

A reply the database shows streaming under a live lease that neither 1 nor 2 can follow (a
turn just claimed and not yet registered, or Redis away) is looked at again every
``POLL_SECONDS`` until one of the three answers. A streaming reply whose lease has expired was
left by a process that died: it is shown as the next turn will record it, interrupted.

An attach holds no database connection while it waits: ``attach_open`` does the request's reads
up front on its thread (the token's, the conversation's) and gives that connection back to the
pool before the stream starts; every later read is a trip that takes one and gives it back
(runner/db.py). Before, each attach kept its request's connection (the token's check) while its
first trip waited for another: a burst of 150 ran the pool dry, and every request, the owner's
too, answered 503 after the pool's timeout. API tokens' attaches are also capped (slots.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

from asgiref.sync import sync_to_async
from django.utils import timezone

from agent import selectors
from agent.activity import shown_activity
from agent.live import mirror
from agent.live.slots import Slots, slots_held, slots_release, slots_take
from agent.live.turns import Event, event_id, live_turn, parse_event_id
from agent.models import Message
from agent.runner.db import connection_give_back, db
from agent.services import INTERRUPTED
from talorys.lib.markdown import render_markdown_async

POLL_SECONDS = 0.5


@dataclass(frozen=True)
class _Stored:
    """What the database says of a conversation's latest reply."""

    conversation_id: int
    title: str
    reply: Message | None
    running: bool  # streaming under a live lease


def _stored(conversation_id: int) -> _Stored:
    conversation = selectors.conversation_get(conversation_id=conversation_id)
    reply = (
        selectors.shown_messages()
        .filter(conversation_id=conversation_id, role=Message.Role.ASSISTANT)
        .order_by("-id")
        .first()
    )
    running = (
        reply is not None
        and reply.status == Message.Status.STREAMING
        and bool(conversation.turn_id)
        and conversation.turn_lease_until is not None
        and conversation.turn_lease_until > timezone.now()
    )
    return _Stored(conversation_id, conversation.title, reply, running)


async def conversation_check(conversation_id: int) -> None:
    """NOT_FOUND before a stream starts, so the refusal is a plain error with its status."""
    await db(_stored)(conversation_id)


@dataclass(frozen=True)
class Opened:
    """An attach that may start: what the database said of its conversation, and the slots it
    holds (None for the owner's session)."""

    stored: _Stored
    slots: Slots | None


async def attach_open(conversation_id: int, *, holder: str | None) -> Opened:
    """Check an SSE attach before its stream starts, so a refusal is a plain error with its
    status: a slot for ``holder`` (an API token, ``token:<prefix>``; None for the owner's
    session) first, RATE_LIMITED beyond the caps (slots.py), then the conversation, NOT_FOUND.
    Runs on the request's thread, and gives its connection back before returning."""
    return await sync_to_async(_open)(conversation_id, holder)


def _open(conversation_id: int, holder: str | None) -> Opened:
    try:
        slots = slots_take(holder) if holder is not None else None
        try:
            return Opened(_stored(conversation_id), slots)
        except BaseException:
            if slots is not None:
                slots_release(slots)
            raise
    finally:
        connection_give_back()


async def attach_held(opened: Opened, last_event_id: str | None) -> AsyncIterator[Event]:
    """``attach`` from what ``attach_open`` read, holding its slots until the stream ends."""
    async with slots_held(opened.slots):
        stored = opened.stored
        async for event in attach(stored.conversation_id, last_event_id, stored=stored):
            yield event


async def attach(
    conversation_id: int, last_event_id: str | None = None, *, stored: _Stored | None = None
) -> AsyncIterator[Event]:
    """The events of the conversation's running reply after ``last_event_id`` (or a snapshot
    first), live to its end; or one snapshot of its latest reply when none is running.
    ``stored``: what the database said a moment ago, so the first look needs no trip."""
    after = parse_event_id(last_event_id)
    while True:
        turn = live_turn(conversation_id)
        if turn is not None:
            async for event in turn.follow(after):
                yield event
            return
        if stored is None:
            stored = await db(_stored)(conversation_id)
        if not stored.running or stored.reply is None:
            yield await _snapshot(stored)
            return
        if mirror.enabled():
            reply_id = stored.reply.pk
            try:
                async for event in mirror.remote_follow(reply_id, after, _saved(conversation_id)):
                    after = parse_event_id(event["id"])
                    yield event
                return
            except mirror.Lost:
                pass  # the database answers once the reply is saved
        stored = None
        await asyncio.sleep(POLL_SECONDS)


def _saved(conversation_id: int) -> Callable[[], Awaitable[bool]]:
    async def finished() -> bool:
        return not (await db(_stored)(conversation_id)).running

    return finished


async def _snapshot(stored: _Stored) -> Event:
    empty: Event = {
        "type": "snapshot",
        "id": "",
        "conversation_id": stored.conversation_id,
        "message_id": None,
        "user_message_id": None,
        "status": None,
        "error_message": "",
        "text": "",
        "html": "",
        "activity": [],
        "title": stored.title,
    }
    reply = stored.reply
    if reply is None:
        return empty
    status, error_message = reply.status, reply.error_message
    if status == Message.Status.STREAMING:  # its lease expired: its process is gone
        status, error_message = Message.Status.ERROR, INTERRUPTED
    return empty | {
        "id": event_id(reply.pk, 0),
        "message_id": reply.pk,
        "status": status,
        "error_message": error_message,
        "text": reply.content,
        "html": await render_markdown_async(reply.content) if reply.content.strip() else "",
        "activity": [shown_activity(a) for a in reply.tool_activity or []],
    }
