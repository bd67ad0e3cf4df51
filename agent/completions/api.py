"""/v1: Talorys as a model for any client of OpenAI's chat completions API.

A NinjaAPI of its own, apart from /api's: its only credential is an API token (``Authorization:
Bearer tal_…``, looked up by its SHA-256 as /api's tokens are, accounts.services): no session,
so no cookie and no CSRF, and every error in OpenAI's shape (talorys/web/openai_errors.py).
A ``read`` token may chat, and its turn may only call read tools (tool mode ``read``); a
``write`` token's turn has every tool, and a destructive one still only proposes (approvals/).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from contextlib import suppress
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
from agent.completions.admission import completion_begin
from agent.completions.schemas import (
    MODEL_ID,
    CompletionIn,
    CompletionOut,
    ModelListOut,
    ModelOut,
    OpenAIErrorOut,
)
from agent.live import turn_run
from agent.live.turns import Event
from agent.runner.db import give_back_request_connection
from talorys.accounts.models import ApiToken
from talorys.accounts.services import api_token_authenticate
from talorys.lib.errors import AppError, BudgetExhausted, NotFound, database_unavailable
from talorys.owner.selectors import model_choices, owner_settings_get, provider_config
from talorys.web.openai_errors import openai_error

BAD_TOKEN = "Incorrect API key provided: send a Talorys API token as 'Authorization: Bearer tal_…'."
# When the one model was made, as OpenAI's list gives every model's creation (seconds).
MODEL_CREATED = 1_796_083_200
# How long a streamed answer waits for the turn's first words before it starts without them.
FIRST_WAIT_SECONDS = 5.0


def token_auth(request: HttpRequest) -> ApiToken | None:
    """The live token of the request's Bearer header, or None (a 401). Sessions do not count."""
    header = request.headers.get("Authorization", "")
    if header[:7].lower() != "bearer ":
        return None
    return api_token_authenticate(raw=header[7:].strip())


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
        return JsonResponse(body, status=status)
    # OpenAI answers every request it cannot take as it is 400, a check of the services too.
    status = 400 if exc.status == 422 else exc.status
    response = _error(status, exc.message, code=exc.code.lower())
    retry_after = getattr(exc, "retry_after", None)
    if retry_after:
        response["Retry-After"] = str(retry_after)
    return response


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


_ERRORS = frozenset({400, 401, 404, 409, 413, 429, 500, 502, 503})
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
    token: ApiToken = request.auth  # type: ignore[attr-defined]  # token_auth's, never None here
    # Every refusal before anything is written (admission.py), then the conversation and the claim.
    start = await completion_begin(messages=payload.messages, token=token, model=model)
    turn = turn_run(start)
    events = turn.follow((start.assistant_message_id, 0))
    await give_back_request_connection()  # no session to save: the turn's trips have their own
    reply = replies.Reply(request.build_absolute_uri(reverse("approvals")))
    completion_id, created = f"chatcmpl-{start.assistant_message_id}", int(time.time())
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
        status, body = replies.turn_error(first)
        return JsonResponse(body, status=status)
    if payload.stream:
        return StreamingHttpResponse(
            _chunks(opening, events, reply, completion_id, created),
            content_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )
    return await _whole(opening.result(), events, reply, completion_id, created)


async def _whole(
    first: Event | None,
    events: AsyncIterator[Event],
    reply: replies.Reply,
    completion_id: str,
    created: int,
) -> HttpResponse:
    """The reply in one chat.completion, once the turn is done."""
    try:
        event = first
        while event is not None and event["type"] != "done":
            if event["type"] == "error":
                status, body = replies.turn_error(event)
                return JsonResponse(body, status=status)
            reply.piece(event)
            event = await replies.first_saying(events)
    finally:
        await events.aclose()  # type: ignore[attr-defined]
    return JsonResponse(replies.completion(completion_id, created, reply.content))


async def _chunks(
    opening: asyncio.Future[Event | None],
    events: AsyncIterator[Event],
    reply: replies.Reply,
    completion_id: str,
    created: int,
) -> AsyncIterator[str]:
    """The reply as chat.completion.chunk events, then ``[DONE]``; a comment line whenever
    nothing came for SSE_KEEPALIVE_SECONDS. Each next event is awaited in a task of its own, so
    that a keep-alive does not cancel the following; closing the stream only stops it."""
    pending = opening
    try:
        yield replies.chunk(completion_id, created, {"role": "assistant", "content": ""}, None)
        while True:
            done, _ = await asyncio.wait({pending}, timeout=settings.SSE_KEEPALIVE_SECONDS)
            if not done:
                yield ": keep-alive\n\n"
                continue
            event = pending.result()
            if event is None or event["type"] == "done":
                yield replies.chunk(completion_id, created, {}, "stop")
                break
            if event["type"] == "error":
                yield f"data: {json.dumps(replies.turn_error(event)[1], ensure_ascii=False)}\n\n"
                break
            piece = reply.piece(event)
            if piece:
                yield replies.chunk(completion_id, created, {"content": piece}, None)
            pending = asyncio.ensure_future(replies.first_saying(events))
        yield "data: [DONE]\n\n"
    finally:
        if not pending.done():
            pending.cancel()
            with suppress(asyncio.CancelledError):
                await pending
        await events.aclose()  # type: ignore[attr-defined]
