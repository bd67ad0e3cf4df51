"""The chat WebSocket (/ws/chat/): transport only. Frames in, runner events out.

Frames: ``{"type": "send", "text", "conversation_id"?, "retry"?, "regenerate"?, "edit"?,
"message_id"?, "attachments"?}`` starts a turn (schemas.SendFrame) and follows it;
``{"type": "attach", "conversation_id", "last_event_id"?}`` follows a conversation's running
reply, wherever it runs, or answers its current state (agent/live/attach.py);
``{"type": "cancel", "conversation_id"}`` stops one (in whichever process runs it). Every event
carries its ``conversation_id``, so one socket can follow several turns, one per conversation.
Closing the socket stops the following, not the turns: they run to their end (agent/live).
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
from collections.abc import AsyncIterator, Coroutine, Mapping
from contextlib import aclosing
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from pydantic import ValidationError

from agent import services
from agent.live import attach, conversation_check, turn_run
from agent.live.turns import Event
from agent.runner.events import error_event
from agent.schemas import AttachFrame, CancelFrame, SendFrame, frame_adapter, turn_request
from memory import embeddings
from talorys.accounts.auth import (
    WEBSOCKET_SESSION_ENDED,
    WEBSOCKET_UNAUTHENTICATED,
    websocket_owner_ok,
)
from talorys.lib.errors import AppError, InternalError, Unauthorized, classify_failure
from talorys.web.websocket import WITHOUT_CHANNEL_LAYER

logger = logging.getLogger(__name__)


class ChatConsumer(AsyncJsonWebsocketConsumer):
    # No channel layer: nothing is sent to this socket from elsewhere (a cancel reaches the turn
    # through the database), so the chat keeps working while Redis is down.
    channel_layer_alias = WITHOUT_CHANNEL_LAYER

    async def connect(self) -> None:
        # What this socket follows, by conversation: a newer send or attach replaces the older.
        self.following: dict[int | None, asyncio.Task[None]] = {}
        # All it follows, a new conversation's turns too: closing the socket stops them all.
        self.tasks: set[asyncio.Task[None]] = set()
        if not await database_sync_to_async(websocket_owner_ok)(self.scope):
            await self.close(code=WEBSOCKET_UNAUTHENTICATED)
            return
        await self.accept()

    async def disconnect(self, code: int) -> None:
        tasks = list(getattr(self, "tasks", ()))
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def receive(
        self, text_data: str | None = None, bytes_data: bytes | None = None, **kwargs: Any
    ) -> None:
        # The base class raises on a binary frame, and json.loads on a deeply nested one
        # (RecursionError): either closed the socket with 1011 and a traceback. A bad frame gets
        # an error event instead, and the socket stays usable.
        if text_data is None:
            await self.send_json(
                error_event("VALIDATION", "Invalid frame: send JSON text, not binary.")
            )
            return
        try:
            await self.receive_json(await self.decode_json(text_data))
        except Exception as error:
            failure = classify_failure(error, message="Could not handle that frame. Try again.")
            if isinstance(failure, InternalError):
                logger.exception("Chat socket: could not handle a frame")
            await self.send_json(error_event(failure.code, failure.message))

    @classmethod
    async def decode_json(cls, text_data: str) -> Any:
        try:
            return json.loads(text_data)
        except (ValueError, RecursionError):
            return None  # answered as an invalid frame

    @classmethod
    async def encode_json(cls, content: Any) -> str:
        return json.dumps(content, default=str)

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        # Every frame, not only the connect: the session may have ended since (websocket_owner_ok).
        # A cancel or send frame is checked in the same trip to the database as what it asks.
        try:
            frame = frame_adapter.validate_python(content)
        except ValidationError as error:
            if not await database_sync_to_async(websocket_owner_ok)(self.scope):
                await self._session_ended()
                return
            problems = "; ".join(
                f"{'.'.join(str(part) for part in item['loc']) or 'frame'}: {item['msg']}"
                for item in error.errors(include_url=False)[:5]
            )
            await self.send_json(error_event("VALIDATION", f"Invalid frame: {problems}."))
            return
        if isinstance(frame, CancelFrame):
            await self._cancel(frame)
            return
        if isinstance(frame, AttachFrame):
            self._follow(frame.conversation_id, self._attach(frame))
            return
        self._follow(frame.conversation_id, self._run(frame))

    def _follow(self, conversation_id: int | None, work: Coroutine[Any, Any, None]) -> None:
        """Run ``work`` (a send's turn, an attach) as what this socket follows in that
        conversation, in place of what it followed there before."""
        older = self.following.pop(conversation_id, None)
        if older is not None:
            older.cancel()
        task = asyncio.create_task(work)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        if conversation_id is not None:  # a new conversation's turns are not replaced
            self.following[conversation_id] = task
            task.add_done_callback(functools.partial(self._forget, conversation_id))

    def _forget(self, conversation_id: int, done: asyncio.Task[None]) -> None:
        if self.following.get(conversation_id) is done:
            del self.following[conversation_id]

    async def _session_ended(self) -> None:
        await self.send_json(error_event(Unauthorized.code, WEBSOCKET_SESSION_ENDED))
        await self.close(code=WEBSOCKET_UNAUTHENTICATED)

    async def _cancel(self, frame: CancelFrame) -> None:
        try:
            cancelled = await database_sync_to_async(_cancel_if_owner)(
                self.scope, frame.conversation_id
            )
        except AppError as error:
            await self.send_json(error_event(error.code, error.message, frame.conversation_id))
            return
        if not cancelled:
            await self._session_ended()

    async def _run(self, frame: SendFrame) -> None:
        # A socket lives for hours, but no connection goes stale on it: database_sync_to_async
        # drops a stale connection before and after the trip.
        # As begin_turn does: the question's vector is made beside the claim and the reads.
        embeddings.query_prefetch(frame.text)
        try:
            start = await database_sync_to_async(_begin_if_owner)(self.scope, turn_request(frame))
        except AppError as error:
            await self.send_json(error_event(error.code, error.message, frame.conversation_id))
            return
        except Exception as error:
            failure = classify_failure(error, message="Could not start the turn. Try again.")
            if isinstance(failure, InternalError):  # no connection to be had: try again, not a bug
                logger.exception("Could not start a chat turn")
            await self.send_json(error_event(failure.code, failure.message, frame.conversation_id))
            return
        if start is None:
            await self._session_ended()
            return
        embeddings.query_prefetch(start.text)
        turn = turn_run(start)
        await self._send_all(turn.follow((start.assistant_message_id, 0)))

    async def _attach(self, frame: AttachFrame) -> None:
        try:
            if not await database_sync_to_async(websocket_owner_ok)(self.scope):
                await self._session_ended()
                return
            await conversation_check(frame.conversation_id)
        except AppError as error:
            await self.send_json(error_event(error.code, error.message, frame.conversation_id))
            return
        await self._send_all(attach(frame.conversation_id, frame.last_event_id))

    async def _send_all(self, events: AsyncIterator[Event]) -> None:
        async with aclosing(events) as following:  # type: ignore[type-var]
            async for event in following:
                await self.send_json(event)


def _begin_if_owner(scope: Mapping[str, Any], request: dict[str, Any]) -> services.TurnStart | None:
    """A send frame's session check and the turn's claim (``begin_turn``'s) in one trip to the
    database: None, with nothing claimed or saved, when the session has ended."""
    if not websocket_owner_ok(scope):
        return None
    return services.turn_begin(**request)


def _cancel_if_owner(scope: Mapping[str, Any], conversation_id: int) -> bool:
    """A cancel frame's session check and the cancel in one trip; False when the session has
    ended (nothing cancelled)."""
    if not websocket_owner_ok(scope):
        return False
    services.turn_cancel(conversation_id=conversation_id)
    return True
