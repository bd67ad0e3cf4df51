import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import suppress
from typing import Any

from django.conf import settings
from django.db import transaction
from django.http import HttpRequest, StreamingHttpResponse
from ninja import Query, Router, Status
from ninja.pagination import paginate

from agent import branches, selectors, services
from agent.live import attach_held, attach_open, turn_run
from agent.live.turns import Event
from agent.models import Conversation
from agent.runner import begin_turn
from agent.runner.db import give_back_request_connection
from agent.schemas import (
    BranchIn,
    ChatCancelIn,
    ChatCancelOut,
    ChatIn,
    ConversationDetailOut,
    ConversationFilters,
    ConversationOut,
    ConversationPatch,
    turn_request,
)
from talorys.accounts.auth import request_actor
from talorys.web.pagination import Pagination
from talorys.web.schemas import ErrorOut

router = Router(tags=["agent"])


def _sse_doc(description: str) -> dict[str, Any]:
    content = {"text/event-stream": {"schema": {"type": "string"}}}
    return {"responses": {200: {"description": description, "content": content}}}


_SSE_DOC = _sse_doc(
    "Server-sent events, each with an id: title, start, text, tool, error, done; after a new "
    "conversation's first reply, possibly a second title (the model's). The turn runs to its end "
    "whether or not this stream is read: attach to it again with GET "
    "/api/conversations/{id}/stream."
)
_ATTACH_DOC = _sse_doc(
    "Server-sent events of the conversation's running reply: after the Last-Event-ID header (or "
    "the last_event_id parameter), else a snapshot of the reply so far first, then live to done. "
    "With no reply running, one snapshot of the latest reply (its text, rendered html and "
    "status), and the stream ends."
)


def _sse(event: Event) -> str:
    head = f"id: {event['id']}\n" if event.get("id") else ""
    return f"{head}event: {event['type']}\ndata: {json.dumps(event, default=str)}\n\n"


async def _event_stream(events: AsyncIterator[Event], *, greet: bool) -> AsyncIterator[str]:
    """The events as SSE, with a comment line whenever none came for SSE_KEEPALIVE_SECONDS, so
    proxies and browsers do not drop a quiet but live stream.

    The next event is awaited in a task of its own, so that a keep-alive does not cancel the
    generator mid-step. Closing this stream (client gone, server shutting down) only stops the
    following: the turn runs on (agent/live). The first step gives back the request thread's
    database connection (begin_turn's), once the response, and its session save, have started.
    With ``greet``, a comment goes out at once: the response's headers leave with its first
    bytes, and an attach that is already up to date may wait long for its next event.
    """
    await give_back_request_connection()
    if greet:
        yield ": attached\n\n"
    pending: asyncio.Future[Event] | None = None
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
        await events.aclose()  # type: ignore[attr-defined]


def _sse_response(events: AsyncIterator[Event], *, greet: bool = False) -> StreamingHttpResponse:
    return StreamingHttpResponse(
        _event_stream(events, greet=greet),
        content_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


# Beside what every operation answers (config/openapi.py): a conversation that is not there or
# busy with another turn, the day's budget spent.
@router.post(
    "/chat", response={200: None, frozenset({404, 409, 429}): ErrorOut}, openapi_extra=_SSE_DOC
)
async def chat(request: HttpRequest, payload: ChatIn) -> StreamingHttpResponse:
    # Claimed before the response starts, so a refusal (CONFLICT, NOT_FOUND, VALIDATION) is
    # answered as a plain JSON error with its status, not as an event.
    start = await begin_turn(**turn_request(payload))
    turn = turn_run(start)
    return _sse_response(turn.follow((start.assistant_message_id, 0)))


# Beside what every operation answers: a conversation that is not there, an API token's
# attaches beyond their caps (agent/live/slots.py).
@router.get(
    "/conversations/{int:conversation_id}/stream",
    response={200: None, frozenset({404, 429}): ErrorOut},
    openapi_extra=_ATTACH_DOC,
)
async def conversation_stream(
    request: HttpRequest,
    conversation_id: int,
    last_event_id: str | None = Query(None, max_length=40),
) -> StreamingHttpResponse:
    # Checked before the stream starts, so a refusal (NOT_FOUND, RATE_LIMITED) is a plain error
    # with its status; no database connection is held from here on.
    actor = request_actor(request)
    opened = await attach_open(conversation_id, holder=actor.source if actor.is_token else None)
    last = request.headers.get("Last-Event-ID") or last_event_id
    return _sse_response(attach_held(opened, last), greet=True)


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


@router.post(
    "/conversations/{int:conversation_id}/branch",
    response={200: ConversationDetailOut, frozenset({404, 409}): ErrorOut},
)
def conversation_branch(
    request: HttpRequest, conversation_id: int, payload: BranchIn
) -> Conversation:
    """Show another branch of the conversation: the one through ``message_id`` (an earlier
    edit of a message, another version of a reply), down to where the owner last was on it.
    Nothing is deleted; 409 while a reply is being written."""
    branches.branch_switch(conversation_id=conversation_id, message_id=payload.message_id)
    return selectors.conversation_with_messages(conversation_id=conversation_id)


@router.patch("/conversations/{int:conversation_id}", response=ConversationOut)
def conversation_update(
    request: HttpRequest, conversation_id: int, payload: ConversationPatch
) -> Conversation:
    """Rename the conversation, or choose the model its next turns ask (one GET /api/models
    lists; null or "" for the default), or both: the model is checked first."""
    conversation = selectors.conversation_get(conversation_id=conversation_id)
    with transaction.atomic():  # a refused title leaves the model as it was, and back
        if "model" in payload.model_fields_set:
            conversation = services.conversation_model_set(
                conversation_id=conversation_id, model=payload.model
            )
        if payload.title is not None:
            conversation = services.conversation_rename(
                conversation_id=conversation_id, title=payload.title, actor=request_actor(request)
            )
    return conversation


@router.delete("/conversations/{int:conversation_id}", response={204: None})
def conversation_delete(request: HttpRequest, conversation_id: int) -> Status:
    services.conversation_delete(conversation_id=conversation_id, actor=request_actor(request))
    return Status(204, None)
