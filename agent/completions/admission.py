"""Whether a /v1 request may start a turn, decided before anything is written; then the writes.

A refused request writes nothing: no conversation, no message, no usage. Every check that can
refuse runs first, on reads only (``completion_admit``). Then one transaction makes that conversation and claims its turn (services.turn_begin); a refusal
there (the chat still answering, the claim's own checks, the day's cap reached meanwhile) rolls
the conversation back with it. The turn reserves its budget before its first model call, as
every turn does: a budget spent by another turn in between is still answered 429, after the
write, only in that race.

The limits, the same for a ``read`` and a ``write`` token (docs/clients.md):

* ``HISTORY_MESSAGES_MAX`` and ``HISTORY_CHARS_MAX``: what a chat Talorys does not hold may
  bring, kept as the client's history. No more messages than a turn ever shows the model
  (selectors.HISTORY_LIMIT, the newest 200), and about a quarter of a million characters: a
  long chat of 100 exchanges fits; a made-up one of 1,000 messages (2.3 MB) does not. A chat
  that continues a conversation here adds only its new message, so only the request's own
  limits apply to it (schemas.MAX_MESSAGES, TALORYS_MAX_BODY_BYTES);
* ``CONVERSATIONS_PER_TOKEN_DAY``: the conversations a token's client may start in the owner's
  day (as the budgets count days), the binned ones included. A resent chat that continues one
  is not new. With both, a token writes at most ~25 M characters of history a day.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import time
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from asgiref.sync import sync_to_async
from django.db import transaction
from django.utils import timezone

from agent import services
from agent.completions.history import ClientChat, client_chat, conversation_match, conversation_new
from agent.completions.schemas import CompletionMessage
from agent.models import CompletionRequest, Conversation, Origin
from agent.runner.model_loop import CHAT_BUDGETS
from agent.runner.phases import claimed
from agent.selectors import HISTORY_LIMIT
from memory import embeddings
from talorys.accounts.models import ApiToken
from talorys.lib.errors import BadRequest, BudgetExhausted, RateLimited
from talorys.owner.models import OwnerSettings
from talorys.owner.selectors import owner_settings_get, provider_config, usage_day
from talorys.owner.services.usage import usage_check

HISTORY_MESSAGES_MAX = HISTORY_LIMIT
HISTORY_CHARS_MAX = 256_000
CONVERSATIONS_PER_TOKEN_DAY = 100


class HistoryTooLong(BadRequest):
    code = "CONTEXT_LENGTH_EXCEEDED"  # OpenAI's code for a request over the model's context


class NewConversationsSpent(RateLimited):
    code = "RATE_LIMIT_EXCEEDED"  # OpenAI's code for a limit on requests


class BudgetSpent(BudgetExhausted):
    """The day's budget, spent: with the seconds until the owner's day ends (``Retry-After``)."""


@dataclass(frozen=True)
class Admission:
    """A request that passed every check: its chat, and the conversation it continues (None:
    a new one, made when the turn is claimed)."""

    chat: ClientChat
    conversation_id: int | None


def history_check(prior: list[tuple[str, str]]) -> None:
    """HistoryTooLong when a chat Talorys does not hold brings more than it keeps."""
    chars = sum(len(text) for _role, text in prior)
    if len(prior) > HISTORY_MESSAGES_MAX or chars > HISTORY_CHARS_MAX:
        raise HistoryTooLong(
            f"This chat brings {len(prior)} earlier messages ({chars} characters) that Talorys "
            f"does not hold; it keeps at most {HISTORY_MESSAGES_MAX} messages and "
            f"{HISTORY_CHARS_MAX} characters of a chat begun elsewhere. Start a new chat."
        )


def _day(owner: OwnerSettings) -> tuple[dt.datetime, dt.datetime]:
    """The owner's day now, as the budgets count it (usage_day): its start and its end."""
    zone, day = ZoneInfo(owner.time_zone), usage_day(owner)
    start, end = (
        dt.datetime.combine(d, dt.time(), tzinfo=zone) for d in (day, day + dt.timedelta(1))
    )
    return start, end


def seconds_to_tomorrow() -> int:
    """The seconds until the owner's day ends, when the day's budgets and counts start again."""
    _start, end = _day(owner_settings_get())
    return max(1, int((end - timezone.now()).total_seconds()) + 1)


def new_conversations_check(*, token: ApiToken, owner: OwnerSettings) -> None:
    """NewConversationsSpent when ``token``'s client started CONVERSATIONS_PER_TOKEN_DAY
    conversations today (the binned ones count: a delete does not give one back)."""
    start, end = _day(owner)
    made = Conversation.objects.filter(api_token=token, created_at__gte=start).count()
    if made >= CONVERSATIONS_PER_TOKEN_DAY:
        raise NewConversationsSpent(
            f"This token has started {CONVERSATIONS_PER_TOKEN_DAY} conversations today, the most "
            "a token may start in a day; continue an existing chat, or wait until tomorrow.",
            retry_after=max(1, int((end - timezone.now()).total_seconds()) + 1),
        )


def completion_admit(*, messages: list[CompletionMessage], token: ApiToken) -> Admission:
    """Every check a request must pass, reading only; raises the refusal (an AppError)."""
    chat = client_chat(messages)
    owner = owner_settings_get()
    if not provider_config(owner).is_demo:  # the demo's replies cost nothing (model_loop)
        for kind in CHAT_BUDGETS:
            try:
                usage_check(kind=kind, owner_settings=owner)
            except BudgetExhausted as spent:
                raise BudgetSpent(spent.message, retry_after=seconds_to_tomorrow()) from spent
    matched = conversation_match(chat.prior)
    if matched is None:
        history_check(chat.prior)
        new_conversations_check(token=token, owner=owner)
    return Admission(chat=chat, conversation_id=matched)


def completion_claim(
    *, admission: Admission, token: ApiToken, replay_id: int | None = None, model: str = ""
) -> services.TurnStart:
    """The admitted request's conversation (made when new) and its turn, claimed in one
    transaction: a refusal of the claim leaves nothing behind. The request's replay row
    (replay.py), when given, is tied to the reply in it. The conversation asks ``model`` from
    now on (a listed one, checked by the caller; "" for the default): the client's choice of
    the moment, as the header's picker is the owner's."""
    with transaction.atomic():
        conversation_id = admission.conversation_id
        if conversation_id is None:
            # The token's row held until the commit: two requests of one token starting
            # conversations at once are counted one after the other, never both under the cap.
            list(ApiToken.objects.select_for_update().filter(pk=token.pk).values_list("pk"))
            new_conversations_check(token=token, owner=owner_settings_get())
            conversation_id = conversation_new(chat=admission.chat, token=token)
        Conversation.objects.filter(pk=conversation_id).update(model=model)
        start = services.turn_begin(
            conversation_id=conversation_id, text=admission.chat.text, origin=Origin.API
        )
        if replay_id is not None:
            CompletionRequest.objects.filter(pk=replay_id).update(
                message_id=start.assistant_message_id
            )
        return start


async def completion_begin(
    *,
    messages: list[CompletionMessage],
    token: ApiToken,
    replay_id: int | None = None,
    model: str = "",
) -> tuple[services.TurnStart, bool]:
    """Admit the request, then make its conversation and claim its turn, as the runner's
    ``begin_turn`` does for the chat (follow it with ``turn_run``); and whether the
    conversation is new. A ``read`` token's turn gets the read tools only."""
    began = time.perf_counter()
    # Not db(): the request's own thread and connection, as begin_turn's (runner/chat.py).
    admission = await sync_to_async(completion_admit)(messages=messages, token=token)
    # The question's vector, made while the turn is claimed (memory/embeddings.py); only for
    # an admitted request: a refused one costs the embedder nothing.
    embeddings.query_prefetch(admission.chat.text)
    start = await sync_to_async(completion_claim)(
        admission=admission, token=token, replay_id=replay_id, model=model
    )
    # What an approval it proposes says of who asked (approvals/services._proposed_by).
    start = dataclasses.replace(start, proposer=f"the /v1 client “{token.name}”")
    if token.scope != ApiToken.Scope.WRITE:
        start = dataclasses.replace(start, tool_mode="read")
    claimed(start, began)  # keyed by the start the turn runs
    return start, admission.conversation_id is None
