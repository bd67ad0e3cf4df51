"""/v1: Talorys as a model for any client of OpenAI's chat completions API.

A NinjaAPI of its own, apart from /api's: its only credential is an API token (``Authorization:
Bearer tal_…``, looked up by its SHA-256 as /api's tokens are, accounts.services): no session,
so no cookie and no CSRF, and every error in OpenAI's shape (talorys/web/openai_errors.py).
A ``read`` token may chat, and its turn may only call read tools (tool mode ``read``); a
``write`` token's turn has every tool, and a destructive one still only proposes (approvals/).
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
from collections.abc import AsyncIterator
from contextlib import suppress
from dataclasses import dataclass
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.urls import reverse
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError
from ninja.errors import ValidationError as NinjaValidationError

from agent.completions import replies
from agent.completions.admission import completion_begin, seconds_to_tomorrow
from agent.completions.history import conversation_discard
from agent.completions.replay import (
    IdempotencyKeyReused,
    Replayed,
    StillAnswering,
    Taken,
    replay_done,
    replay_forget,
    replay_take,
    replay_wait,
    request_key,
)
from agent.completions.schemas import (
    MODEL_ID,
    CompletionIn,
    CompletionOut,
    ModelListOut,
    ModelOut,
    OpenAIErrorOut,
)
from agent.live import turn_run
from agent.live.ready import reply_ready_notice
from agent.live.turns import Event, LiveTurn
from agent.models import Message
from agent.runner.db import db, give_back_request_connection
from talorys.accounts.models import ApiToken
from talorys.accounts.services import api_token_authenticate, bearer_secret
from talorys.lib.errors import AppError, BudgetExhausted, NotFound, database_unavailable
from talorys.owner.selectors import model_choices, owner_settings_get, provider_config
from talorys.web.openai_errors import openai_error

BAD_TOKEN = "Incorrect API key provided: send a Talorys API token as 'Authorization: Bearer tal_…'."
# When the one model was made, as OpenAI's list gives every model's creation (seconds).
MODEL_CREATED = 1_796_083_200
# How long a streamed answer waits for the turn's first words before it starts without them.
FIRST_WAIT_SECONDS = 5.0
# How long a failed turn's error answer waits for its clean-up (``_ended``).
CLEAN_UP_WAIT_SECONDS = 10.0

log = logging.getLogger(__name__)


def token_auth(request: HttpRequest) -> ApiToken | None:
    """The live token of the request's Bearer header, or None (a 401). Sessions do not count."""
    raw = bearer_secret(request.headers.get("Authorization"))
    return api_token_authenticate(raw=raw) if raw is not None else None


v1_api = NinjaAPI(
    title="Talorys, OpenAI-compatible",
    version="1",
    description=(
        "Chat completions with Talorys as the model `talorys` (the owner's default model), or "
        "any model GET /v1/models lists. `Authorization: Bearer <token>`."
    ),
    auth=token_auth,
    urls_namespace="v1",
    openapi_url=None,  # its schema is OpenAI's; tests read it from get_openapi_schema()
    docs_url=None,
)


def _error(status: int, message: str, **fields: Any) -> JsonResponse:
    return JsonResponse(openai_error(status, message, **fields), status=status)


@v1_api.exception_handler(AppError)
def _app_error(request: HttpRequest, exc: AppError) -> HttpResponse:
    if isinstance(exc, BudgetExhausted):  # refused before the turn: as the turn would say it
        status, body = replies.error_answer(exc.code, exc.message)
        return exc.retry_after_header(JsonResponse(body, status=status))
    # OpenAI answers every request it cannot take as it is 400, a check of the services too;
    # an Idempotency-Key sent again with another body is 422, as the header's draft says.
    reused = isinstance(exc, IdempotencyKeyReused)
    status = 400 if exc.status == 422 and not reused else exc.status
    return exc.retry_after_header(_error(status, exc.message, code=exc.code.lower()))


@v1_api.exception_handler(NinjaValidationError)
def _invalid(request: HttpRequest, exc: NinjaValidationError) -> HttpResponse:
    first = exc.errors[0] if exc.errors else {}
    where = [str(part) for part in first.get("loc", ())][1:]
    message = "; ".join(
        f"{'.'.join(str(p) for p in err.get('loc', ())[1:]) or 'body'}: {err.get('msg', 'invalid')}"
        for err in exc.errors[:5]
    )
    return _error(400, message or "Invalid request.", param=".".join(where) or None)


@v1_api.exception_handler(AuthenticationError)
def _unauthenticated(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
    return _error(401, BAD_TOKEN)


@v1_api.exception_handler(HttpError)
def _http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    return _error(exc.status_code, str(exc.message))


@v1_api.exception_handler(DatabaseError)
def _database_error(request: HttpRequest, exc: DatabaseError) -> HttpResponse:
    busy = database_unavailable(exc)
    if busy is None:
        raise exc  # a bug: the middleware's 500, in this shape too
    return _app_error(request, busy)


_ERRORS = frozenset({400, 401, 404, 409, 413, 422, 429, 500, 502, 503})
_STREAM_DOC = {
    "responses": {
        200: {
            "description": (
                "Without `stream`, one chat.completion. With `stream: true`, server-sent events: "
                "`data:` chat.completion.chunk objects, then `data: [DONE]`."
            ),
        }
    }
}


def _model(model: str = MODEL_ID) -> dict[str, Any]:
    return {"id": model, "object": "model", "created": MODEL_CREATED, "owned_by": "talorys"}


def _listed() -> list[str]:
    """``talorys`` (Talorys with the owner's default model), then every model the configured
    server lists (talorys.owner.selectors.model_choices); the demo has no other."""
    owner = owner_settings_get()
    if provider_config(owner).is_demo:
        return [MODEL_ID]
    return [MODEL_ID, *model_choices(owner_settings=owner).models]


@v1_api.get("/models", response={200: ModelListOut, frozenset({401, 503}): OpenAIErrorOut})
def models(request: HttpRequest) -> dict[str, Any]:
    return {"object": "list", "data": [_model(model) for model in _listed()]}


@v1_api.get("/models/{model}", response={200: ModelOut, frozenset({401, 404}): OpenAIErrorOut})
def model_get(request: HttpRequest, model: str) -> dict[str, Any]:
    _check_model(model)
    return _model(model)


def _check_model(model: str) -> str:
    """The model a conversation stores for ``model`` ("" for ``talorys``: the default); NotFound
    for one the server does not list."""
    if model == MODEL_ID:
        return ""
    if model not in _listed():
        raise NotFound(
            f"The model `{model[:100]}` does not exist: GET /v1/models lists those there are.",
            code="MODEL_NOT_FOUND",
        )
    return model


@v1_api.post(
    "/chat/completions",
    response={200: CompletionOut, _ERRORS: OpenAIErrorOut},
    openapi_extra=_STREAM_DOC,
)
async def chat_completions(
    request: HttpRequest, payload: CompletionIn
) -> HttpResponse | StreamingHttpResponse:
    model = await sync_to_async(_check_model)(payload.model)
    refused = payload.unsupported()
    if refused is not None:
        return _error(400, refused[1], param=refused[0], code="unsupported_parameter")
    token: ApiToken = request.auth  # type: ignore[attr-defined]  # token_auth's, never None here
    approvals_url = request.build_absolute_uri(reverse("approvals"))
    key, digest, seconds = request_key(request.headers.get("Idempotency-Key"), request.body)
    # The same request sent again is answered with the first answer (replay.py); the first of
    # them runs the turn. A first one that was refused or failed having done nothing lets go.
    for _attempt in range(3):
        taken = await sync_to_async(replay_take)(
            token=token, key=key, digest=digest, seconds=seconds
        )
        if taken.made:
            return await _answer(payload, token, taken, approvals_url, model)
        replayed = await replay_wait(taken.row_id, approvals_url)
        if replayed is not None:
            return _replayed(replayed, payload)
    raise StillAnswering("The same request is still being answered; send it again in a moment.")


async def _answer(
    payload: CompletionIn, token: ApiToken, taken: Taken, approvals_url: str, model: str
) -> HttpResponse | StreamingHttpResponse:
    """Run the request's turn and answer with it, whole or streamed."""
    row_id = taken.row_id
    try:
        # Every refusal before anything is written (admission.py), then the conversation and
        # the claim, which ties the replay row to the reply.
        start, new = await completion_begin(
            messages=payload.messages, token=token, replay_id=row_id, model=model
        )
    except Exception:
        await sync_to_async(replay_forget)(row_id)
        raise
    turn = turn_run(start, after_end=functools.partial(_ended, new=new, row_id=row_id))
    events = turn.follow((start.assistant_message_id, 0))
    await give_back_request_connection()  # no session to save: the turn's trips have their own
    reply = replies.Reply(approvals_url)
    completion_id, created = f"chatcmpl-{start.assistant_message_id}", taken.created
    # An error before anything was said is answered with its status (a spent budget: 429). A
    # stream waits for that at most FIRST_WAIT_SECONDS: then it starts, with keep-alives, so that
    # a slow model's silence does not look like a dead connection to a proxy.
    opening = asyncio.ensure_future(replies.first_saying(events))
    try:
        await asyncio.wait({opening}, timeout=FIRST_WAIT_SECONDS if payload.stream else None)
    except asyncio.CancelledError:  # the client went away: the turn runs on, unfollowed
        opening.cancel()
        raise
    if opening.done() and (first := opening.result()) is not None and first["type"] == "error":
        await events.aclose()  # type: ignore[attr-defined]
        return await _turn_failed(turn, first)
    ids = _Ids(completion_id, created, row_id, replies.model_named(payload.model))
    if payload.stream:
        return StreamingHttpResponse(
            _chunks(opening, events, reply, ids, payload.include_usage()),
            content_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )
    return await _whole(turn, opening.result(), events, reply, ids)


async def _ended(turn: LiveTurn, *, new: bool, row_id: int) -> None:
    """After the turn: one that failed having said and done nothing leaves no conversation it
    made (history.conversation_discard) and no replay row (a retry runs again)."""
    if turn.status == Message.Status.ERROR and not turn.activity and not "".join(turn.parts):
        try:
            if not (new and await db(conversation_discard)(turn.conversation_id)):
                await db(replay_forget)(row_id)
        except Exception:  # the turn is saved; a failed clean-up only leaves it in the list
            log.exception("Conversation %s: failed request not cleared", turn.conversation_id)
    await reply_ready_notice(turn)


async def _turn_failed(turn: LiveTurn, event: Event) -> JsonResponse:
    """The error answer of a turn that failed, once its clean-up (``_ended``) is done."""
    if turn.task is not None:
        await asyncio.wait({turn.task}, timeout=CLEAN_UP_WAIT_SECONDS)
    status, body = replies.turn_error(event)
    return await _error_answer(status, body)


async def _error_answer(status: int, body: dict[str, Any]) -> JsonResponse:
    response = JsonResponse(body, status=status)
    if status == 429:  # the day's budget: spent until the owner's day ends
        response["Retry-After"] = str(await sync_to_async(seconds_to_tomorrow)())
    return response


@dataclass(frozen=True)
class _Ids:
    completion_id: str
    created: int
    row_id: int
    model: str  # the model the answer names (replies.model_named)


def _replayed(replayed: Replayed, payload: CompletionIn) -> HttpResponse | StreamingHttpResponse:
    """The first answer again, as this request asks for it (whole or streamed)."""
    if replayed.error is not None:
        return JsonResponse(replayed.error, status=replayed.status)
    usage = replayed.usage or replies.usage_of(0, 0)
    cid, created = replayed.completion_id, replayed.created
    model = replies.model_named(payload.model)  # the same body: the model the first one named
    if not payload.stream:
        return JsonResponse(replies.completion(cid, created, model, replayed.content, usage))
    parts = [
        replies.chunk(cid, created, model, {"role": "assistant", "content": ""}, None),
        replies.chunk(cid, created, model, {"content": replayed.content}, None),
        replies.chunk(cid, created, model, {}, "stop"),
        replies.usage_chunk(cid, created, model, usage) if payload.include_usage() else "",
        "data: [DONE]\n\n",
    ]
    return StreamingHttpResponse(
        iter([part for part in parts if part]),
        content_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


async def _whole(
    turn: LiveTurn,
    first: Event | None,
    events: AsyncIterator[Event],
    reply: replies.Reply,
    ids: _Ids,
) -> HttpResponse:
    """The reply in one chat.completion, once the turn is done."""
    try:
        event = first
        while event is not None:
            if event["type"] == "error":
                return await _turn_failed(turn, event)
            reply.piece(event)
            if event["type"] == "done":
                break
            event = await replies.first_saying(events)
    finally:
        await events.aclose()  # type: ignore[attr-defined]
    usage = reply.usage()
    await sync_to_async(replay_done)(ids.row_id, usage)
    return JsonResponse(
        replies.completion(ids.completion_id, ids.created, ids.model, reply.content, usage)
    )


async def _last_chunks(reply: replies.Reply, ids: _Ids, include_usage: bool) -> list[str]:
    """The finish chunk, and the usage chunk when asked for; the usage kept for a replay."""
    usage = reply.usage()
    await sync_to_async(replay_done)(ids.row_id, usage)
    last = [replies.chunk(ids.completion_id, ids.created, ids.model, {}, "stop")]
    if include_usage:
        last.append(replies.usage_chunk(ids.completion_id, ids.created, ids.model, usage))
    return last


async def _chunks(
    opening: asyncio.Future[Event | None],
    events: AsyncIterator[Event],
    reply: replies.Reply,
    ids: _Ids,
    include_usage: bool,
) -> AsyncIterator[str]:
    """The reply as chat.completion.chunk events, then its usage when asked for, then
    ``[DONE]``; a comment line whenever nothing came for SSE_KEEPALIVE_SECONDS. Each next event
    is awaited in a task of its own, so that a keep-alive does not cancel the following; closing
    the stream only stops it."""
    pending, cid, created, model = opening, ids.completion_id, ids.created, ids.model
    try:
        yield replies.chunk(cid, created, model, {"role": "assistant", "content": ""}, None)
        while True:
            done, _ = await asyncio.wait({pending}, timeout=settings.SSE_KEEPALIVE_SECONDS)
            if not done:
                yield ": keep-alive\n\n"
                continue
            event = pending.result()
            if event is not None and event["type"] == "error":
                yield f"data: {json.dumps(replies.turn_error(event)[1], ensure_ascii=False)}\n\n"
                break
            piece = reply.piece(event) if event is not None else ""
            if piece:
                yield replies.chunk(cid, created, model, {"content": piece}, None)
            if event is None or event["type"] == "done":
                for part in await _last_chunks(reply, ids, include_usage):
                    yield part
                break
            pending = asyncio.ensure_future(replies.first_saying(events))
        yield "data: [DONE]\n\n"
    finally:
        if not pending.done():
            pending.cancel()
            with suppress(asyncio.CancelledError):
                await pending
        await events.aclose()  # type: ignore[attr-defined]
