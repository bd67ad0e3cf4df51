import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import suppress
from typing import Any

from django.conf import settings
from django.http import HttpRequest, StreamingHttpResponse
from ninja import Query, Router, Status
from ninja.pagination import paginate

from agent import selectors, services
from agent.models import Conversation
from agent.runner import begin_turn, stream_turn
from agent.runner.events import TurnEvent
from agent.schemas import (
    ChatCancelIn,
    ChatCancelOut,
    ChatIn,
    ConversationDetailOut,
    ConversationFilters,
    ConversationOut,
    ConversationPatch,
    turn_request,
)
from agent.services import TurnStart
from talorys.accounts.auth import request_actor
from talorys.lib.pagination import Pagination
from talorys.lib.schemas import ErrorOut

router = Router(tags=["agent"])

_SSE_DOC = {
    "responses": {
        200: {
            "description": (
                "Server-sent events: title, start, text, tool, error, done; after a new "
                "conversation's first reply, possibly a second title (the model's)."
            ),
            "content": {"text/event-stream": {"schema": {"type": "string"}}},
        }
    }
}


def _sse(event: TurnEvent) -> str:
    return f"event: {event['type']}\ndata: {json.dumps(event, default=str)}\n\n"


async def _event_stream(start: TurnStart) -> AsyncIterator[str]:
    """The turn's events as SSE, with a comment line whenever the model is silent for
    SSE_KEEPALIVE_SECONDS, so proxies and browsers do not drop a quiet but live stream.

    The next event is awaited in a task of its own: a keep-alive must not cancel the turn's
    generator mid-step. Closing this stream (client gone, server shutting down) cancels that
    task and closes the turn, which then ends ``cancelled``.
    """
    events = stream_turn(start)
    pending: asyncio.Future[TurnEvent] | None = None
    try:
        while True:
            pending = pending or asyncio.ensure_future(anext(events))
            done, _ = await asyncio.wait({pending}, timeout=settings.SSE_KEEPALIVE_SECONDS)
            if not done:
                yield ": keep-alive\n\n"
                continue
            try:
                event = pending.result()
            except StopAsyncIteration:
                pending = None
                return
            pending = None
            yield _sse(event)
    finally:
        if pending is not None and not pending.done():
            pending.cancel()
            with suppress(asyncio.CancelledError, StopAsyncIteration):
                await pending
        await events.aclose()


# Beside what every operation answers (talorys/openapi.py): a conversation that is not there or
# busy with another turn, the day's budget spent.
@router.post(
    "/chat", response={200: None, frozenset({404, 409, 429}): ErrorOut}, openapi_extra=_SSE_DOC
)
async def chat(request: HttpRequest, payload: ChatIn) -> StreamingHttpResponse:
    # Claimed before the response starts, so a refusal (CONFLICT, NOT_FOUND, VALIDATION) is
    # answered as a plain JSON error with its status, not as an event.
    start = await begin_turn(**turn_request(payload))
    return StreamingHttpResponse(
        _event_stream(start),
        content_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


@router.post("/chat/cancel", response={200: ChatCancelOut, 404: ErrorOut})
def chat_cancel(request: HttpRequest, payload: ChatCancelIn) -> dict[str, Any]:
    return {"cancelled": services.turn_cancel(conversation_id=payload.conversation_id)}


@router.get("/conversations", response=list[ConversationOut])
@paginate(Pagination)
def conversation_list(request: HttpRequest, filters: Query[ConversationFilters]):
    return selectors.conversation_list(q=filters.q)


@router.get("/conversations/{int:conversation_id}", response=ConversationDetailOut)
def conversation_get(request: HttpRequest, conversation_id: int) -> Conversation:
    return selectors.conversation_with_messages(conversation_id=conversation_id)


@router.patch("/conversations/{int:conversation_id}", response=ConversationOut)
def conversation_rename(
    request: HttpRequest, conversation_id: int, payload: ConversationPatch
) -> Conversation:
    return services.conversation_rename(
        conversation_id=conversation_id, title=payload.title, actor=request_actor(request)
    )


@router.delete("/conversations/{int:conversation_id}", response={204: None})
def conversation_delete(request: HttpRequest, conversation_id: int) -> Status:
    services.conversation_delete(conversation_id=conversation_id, actor=request_actor(request))
    return Status(204, None)
