"""Retries do not repeat actions: a /v1 request sent again is answered with the first answer,
without running the model or its tools again.

A client that lost an answer (a timeout, a dropped connection, a parse error after the answer
came, as ``llm --no-stream`` had) sends the request again, and a turn that added a task would
add it twice. So each request is kept (models.CompletionRequest, in the database, which every
web process shares) under a key of its token:

* its ``Idempotency-Key`` header, for ``KEY_SECONDS`` (a day): the same key with another body
  is refused (422, ``idempotency_key_reused``), as the IETF draft on the header has it;
* without the header, its body's SHA-256 (the JSON as parsed, keys sorted), for
  ``TALORYS_V1_REPLAY_SECONDS`` (60 s by default): the same chat sent twice in that time.

Both count from the reply's end: a client that timed out during a long turn and sent the request
again is answered once it ends.

The first request inserts the row (the unique key decides between two at once: PostgreSQL
makes the second wait for the first's commit, then find its row), runs the turn, and ties the
row to its reply in the transaction that claims the turn (admission.completion_claim). A
request that finds the row waits for that reply to end (``REPLAY_WAIT_SECONDS`` at most, then
409) and answers with it: its text with the tool lines, or its error. A first request that was
refused, or whose turn failed having done nothing, leaves no row (``replay_forget``; the failed
chat's conversation takes its row with it): the retry runs, as it should.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import json
import time
from dataclasses import dataclass
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from agent.activity import shown_activity
from agent.completions import replies
from agent.models import CompletionRequest, Message
from talorys.accounts.models import ApiToken
from talorys.lib.errors import AppError, BadRequest, Conflict

KEY_SECONDS = 24 * 3600
# A row whose request never claimed its turn (its process died in between) is given up after this.
UNCLAIMED_SECONDS = 60
REPLAY_WAIT_SECONDS = 300
POLL_SECONDS = 0.2
# How long after its reply ends a replay waits for the first answer's usage (then estimates it:
# a first request whose client went away never writes it).
USAGE_GRACE = dt.timedelta(seconds=5)
_VISIBLE = frozenset(chr(c) for c in range(0x21, 0x7F))


class IdempotencyKeyReused(AppError):
    code = "IDEMPOTENCY_KEY_REUSED"
    status = 422


class StillAnswering(Conflict):
    code = "IDEMPOTENCY_IN_PROGRESS"


@dataclass(frozen=True)
class Replayed:
    """The first answer of a request sent again: ``status`` 200 with the reply's ``content``
    and ``usage``, or its error's status and OpenAI body."""

    status: int
    completion_id: str
    created: int
    content: str = ""
    usage: dict[str, int] | None = None
    error: dict[str, Any] | None = None


def request_key(idempotency_key: str | None, body: bytes) -> tuple[str, str, int]:
    """The request's key, its body's SHA-256 and how long it is kept, in seconds."""
    try:
        canonical = json.dumps(json.loads(body), sort_keys=True, ensure_ascii=False)
    except ValueError:  # ninja parsed it already: not reached
        canonical = body.decode(errors="replace")
    digest = hashlib.sha256(canonical.encode()).hexdigest()
    if idempotency_key is None:
        return f"body:{digest}", digest, settings.TALORYS_V1_REPLAY_SECONDS
    key = idempotency_key.strip()
    if not key or len(key) > CompletionRequest.KEY_MAX or not set(key) <= _VISIBLE:
        raise BadRequest(
            f"Idempotency-Key must be 1 to {CompletionRequest.KEY_MAX} visible ASCII characters."
        )
    return f"key:{key}", digest, KEY_SECONDS


@dataclass(frozen=True)
class Taken:
    """The request's row; whether this request made it (it runs the turn) or found the first's
    (it replays it); and when the first came, the ``created`` of its answer and every replay's."""

    row_id: int
    made: bool
    created: int


def replay_take(*, token: ApiToken, key: str, digest: str, seconds: int) -> Taken:
    """The request's row (Taken). IdempotencyKeyReused when the first had another body."""
    now = timezone.now()
    with transaction.atomic():
        # A reply that ended longer ago than the key is kept, or a request that never claimed
        # its turn: the key is free again. And the token's rows of yesterday, which no retry
        # may replay any more. A reply still running keeps its key, however long it takes: the
        # retry of a client that timed out waits for it.
        ended = ~Q(message__status=Message.Status.STREAMING)
        CompletionRequest.objects.filter(api_token=token).filter(
            (Q(key=key, message__updated_at__lt=now - dt.timedelta(seconds=seconds)) & ended)
            | Q(key=key, message=None, created_at__lt=now - dt.timedelta(seconds=UNCLAIMED_SECONDS))
            | (Q(created_at__lt=now - dt.timedelta(seconds=KEY_SECONDS)) & ended)
        ).delete()
        row, made = CompletionRequest.objects.get_or_create(
            api_token=token, key=key, defaults={"body_sha256": digest}
        )
    if not made and row.body_sha256 != digest:
        raise IdempotencyKeyReused(
            "This Idempotency-Key was sent with another request body: send a new key for a new "
            "request, or the same body to have the first answer again."
        )
    return Taken(row.pk, made, int(row.created_at.timestamp()))


def replay_forget(row_id: int) -> None:
    """The request's row gone: it was refused, or its turn failed having done nothing."""
    CompletionRequest.objects.filter(pk=row_id).delete()


def replay_done(row_id: int, usage: dict[str, int]) -> None:
    CompletionRequest.objects.filter(pk=row_id).update(usage=usage)


def _answer(row_id: int, approvals_url: str) -> Replayed | None | bool:
    """The first answer when its reply has ended; True while it runs; None when there is
    none to give (no row any more, or a reply that ended having said and done nothing: the
    row is let go, and this request runs the turn itself)."""
    row = CompletionRequest.objects.filter(pk=row_id).select_related("message").first()
    if row is None:
        return None
    message = row.message
    if message is None or message.status == Message.Status.STREAMING:
        return True
    if row.usage is None and timezone.now() - message.updated_at < USAGE_GRACE:
        return True  # the first request is writing its usage down (replay_done)
    completion_id, created = f"chatcmpl-{message.pk}", int(row.created_at.timestamp())
    if message.status != Message.Status.COMPLETE and not (message.content or message.tool_activity):
        replay_forget(row_id)
        return None
    if message.status == Message.Status.ERROR:
        status, body = replies.error_answer(message.error_code, message.error_message)
        return Replayed(status, completion_id, created, error=body)
    reply = replies.Reply(approvals_url)
    for activity in message.tool_activity:
        reply.piece({"type": "tool", "activity": shown_activity(activity)})
    reply.piece({"type": "text", "delta": message.content})
    usage = row.usage or reply.usage()
    return Replayed(200, completion_id, created, content=reply.content, usage=usage)


async def replay_wait(row_id: int, approvals_url: str) -> Replayed | None:
    """The first request's answer once its reply has ended, or None when this request must run
    the turn itself. StillAnswering past REPLAY_WAIT_SECONDS."""
    deadline = time.monotonic() + REPLAY_WAIT_SECONDS
    while True:
        found = await sync_to_async(_answer)(row_id, approvals_url)
        if found is not True:
            return found  # type: ignore[return-value]  # None or a Replayed
        if time.monotonic() > deadline:
            raise StillAnswering(
                "The same request is still being answered; send it again in a moment."
            )
        await asyncio.sleep(POLL_SECONDS)
