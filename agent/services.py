"""Conversations, messages and the turn claim.

One turn at a time per conversation, across processes: a turn holds a lease on its Conversation
row (``turn_id`` + ``turn_lease_until``), taken with a conditional UPDATE and renewed while it
streams. A process that dies leaves a lease that simply expires (in ``LEASE_SECONDS``) and its
reply as last saved (agent/turn_saves.py), which the next turn closes as interrupted. Cancel is
a flag on the same row that the running turn polls, so it works from any process.

None of these functions calls a model provider; the runner does that between them.
"""

from __future__ import annotations

import datetime as dt
import secrets
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from agent.attachments import attachments_checked, message_attachments_set
from agent.models import Conversation, Message, Origin
from agent.rerun import Rerun, check_rerun, turn_target
from agent.selectors import conversation_get
from talorys.history.bin import bin_move_out
from talorys.history.changes import change_record
from talorys.history.kinds import ItemKind, register_kind
from talorys.history.models import Change
from talorys.lib.actors import OWNER, Actor
from talorys.lib.errors import Conflict, NotFound, ValidationFailed, field_refused
from talorys.lib.tools import Mode
from talorys.lib.validation import clean_line, one_line, refuse_nul
from talorys.owner.selectors import model_choices, owner_settings_get, provider_config
from talorys.providers.base import without_nul
from talorys.providers.demo.titles import demo_title
from talorys.web.live import pages_tell

# How long a conversation stays taken (409) by a turn whose process died. The running turn
# renews it every LEASE_SECONDS / 3 (agent/runner/lease.py): two renewals may be late in a row.
LEASE_SECONDS = 15
MAX_MESSAGE_CHARS = 32_000
TITLE_WORDS = 6  # the first words kept as a title: never more
TITLE_CHARS = 60

# A conversation's row once no turn holds it.
NO_TURN = {"turn_id": "", "turn_lease_until": None, "turn_cancel_requested": False}

BUSY = "A response is already being generated in this conversation."
INTERRUPTED = "This reply was interrupted before it finished. Retry it."


@dataclass(frozen=True)
class TurnStart:
    """What a claimed turn works on. ``title`` is set when the turn made the conversation."""

    conversation_id: int
    turn_id: str
    user_message_id: int
    assistant_message_id: int
    text: str
    title: str | None = None
    # What a regenerate or an edit took out of the conversation (kept, marked replaced).
    replaced_message_ids: tuple[int, ...] = ()
    tool_mode: Mode = "chat"  # its tools (talorys/lib/tools.py): "read" under a read token
    proposer: str = ""  # a /v1 turn: its client by name, on the approvals it proposes
    # The files attached to the owner's message, in the order given (runner/inputs.py).
    attachments: tuple[int, ...] = ()


def conversation_title(*, text: str) -> str:
    """The first words of the owner's message: cheap, and no model call."""
    words = one_line(text).split()
    title = " ".join(words[:TITLE_WORDS])
    if len(title) > TITLE_CHARS:
        title = title[: TITLE_CHARS - 1].rstrip() + "…"
    elif len(words) > TITLE_WORDS:
        title += "…"
    return title or "New conversation"


def first_title(*, text: str) -> str:
    """A new conversation's title from the owner's first message: its first words, or under the
    demo model the demo's short name for the request ("Add task: buy milk",
    talorys/providers/demo/titles.py), as no model names it after the reply (runner/title.py)."""
    if provider_config(owner_settings_get()).is_demo:
        return demo_title(text)
    return conversation_title(text=text)


def _lease_end() -> dt.datetime:
    return timezone.now() + dt.timedelta(seconds=LEASE_SECONDS)


def _clean_owner_text(text: str) -> str:
    text = (text or "").strip()
    if not text:
        raise ValidationFailed("text must not be empty.")
    if len(text) > MAX_MESSAGE_CHARS:
        raise ValidationFailed(f"text is longer than {MAX_MESSAGE_CHARS} characters.")
    return refuse_nul(text, field="text")  # the socket's frames reach here unchecked


def conversation_delete(*, conversation_id: int, actor: Actor = OWNER) -> None:
    """To the bin with its messages (restorable for BIN_RETENTION), unless a turn is still
    writing to it. One conditional UPDATE: a turn claim racing it (which needs the conversation
    live) and this (which needs no turn) cannot both win."""
    with transaction.atomic():
        binned = (
            Conversation.objects.live()
            .filter(pk=conversation_id)
            .filter(Q(turn_id="") | Q(turn_lease_until__lt=timezone.now()))
            .update(deleted_at=timezone.now(), turn_id="", turn_lease_until=None)
        )
        if not binned:
            conversation_get(conversation_id=conversation_id)
            raise Conflict(f"{BUSY} Cancel it first.")
        _tell(conversation_id, "deleted")
        conversation = Conversation.objects.get(pk=conversation_id)
        change_record(
            kind=CONVERSATION.name,
            obj=conversation,
            action=Change.Action.DELETE,
            actor=actor,
            before={"title": conversation.title},
        )


def conversation_rename(*, conversation_id: int, title: str, actor: Actor = OWNER) -> Conversation:
    """The owner's title, recorded in the change log (and revertable there). Final: the model's
    generated title never replaces it (conversation_title_generated)."""
    title = clean_line(title, field="title", max_length=Conversation.TITLE_MAX)
    with transaction.atomic():
        # Locked: a generated title landing at the same moment is either overwritten or refused.
        conversation = (
            Conversation.objects.live().select_for_update().filter(pk=conversation_id).first()
        )
        if conversation is None:
            raise NotFound(f"Conversation {conversation_id} does not exist.")
        before = conversation.title
        conversation.title = title
        conversation.title_source = Conversation.TitleSource.OWNER
        # Not updated_at: the list is ordered by the last exchange, and a rename is not one.
        Conversation.objects.filter(pk=conversation_id).update(
            title=title, title_source=Conversation.TitleSource.OWNER
        )
        change_record(
            kind=CONVERSATION.name,
            obj=conversation,
            action=Change.Action.UPDATE,
            actor=actor,
            before={"title": before},
            after={"title": title},
        )
        _tell(conversation_id, "renamed", title=title)
    return conversation


def model_checked(model: str | None) -> str:
    """``model`` as a conversation stores it: one the configured server lists
    (talorys.owner.selectors.model_choices), or "" (from None or "") for the owner's default.
    Anything else is refused on ``model``."""
    model = (model or "").strip()
    if not model:
        return ""
    choices = model_choices(owner_settings=owner_settings_get())
    if model not in choices.models:
        listed = "" if choices.available else f" (the list could not be read: {choices.problem})"
        raise field_refused(
            f"The model server does not list the model {model[:100]!r}{listed}.", field="model"
        )
    return model


def conversation_model_set(*, conversation_id: int, model: str | None) -> Conversation:
    """The model the conversation's next turns ask (``model_checked``); a refusal changes
    nothing. A turn already running keeps its model."""
    model = model_checked(model)
    updated = Conversation.objects.live().filter(pk=conversation_id).update(model=model)
    if not updated:
        raise NotFound(f"Conversation {conversation_id} does not exist.")
    _tell(conversation_id, "model", model=model)
    return conversation_get(conversation_id=conversation_id)


def conversation_title_generated(*, conversation_id: int, title: str) -> bool:
    """Store the model's title for a conversation that still has its first-words title; False
    when the owner renamed it meanwhile (or binned it). One conditional UPDATE, so a rename
    racing it wins either way."""
    title = one_line(without_nul(title)).strip()[: Conversation.TITLE_MAX]
    if not title:
        return False
    titled = bool(
        Conversation.objects.live()
        .filter(pk=conversation_id, title_source=Conversation.TitleSource.MESSAGE)
        .update(title=title, title_source=Conversation.TitleSource.MODEL)
    )
    if titled:
        _tell(conversation_id, "renamed", title=title)
    return titled


def conversation_restore(*, conversation_id: int, actor: Actor = OWNER) -> None:
    """Out of the bin with its messages, as it was."""
    with transaction.atomic():
        bin_move_out(CONVERSATION, conversation_id, actor)
        _tell(conversation_id, "restored")


def _tell(conversation_id: int, change: str, **fields: str) -> None:
    # Every open page (a second tab, the list) shows the change: talorys/web/live.py.
    pages_tell("conversation", conversation_id=conversation_id, change=change, **fields)


CONVERSATION = ItemKind(
    name="conversation",
    model=Conversation,
    fields=("title",),
    title=lambda conversation: str(conversation),
    restore=lambda *, pk, actor, change: conversation_restore(conversation_id=pk, actor=actor),
    delete=lambda *, pk, actor: conversation_delete(conversation_id=pk, actor=actor),
    apply=lambda *, pk, values, actor: conversation_rename(
        conversation_id=pk, title=values["title"], actor=actor
    ),
)
register_kind(CONVERSATION)


def conversation_summary_store(*, conversation_id: int, summary: str, summary_upto: int) -> None:
    Conversation.objects.filter(pk=conversation_id).update(
        summary=without_nul(summary), summary_upto=summary_upto
    )


def turn_claim(*, conversation_id: int, turn_id: str) -> bool:
    """Take the conversation's turn lease, or raise Conflict when another turn holds it.

    Returns True when it took over the expired lease of a turn whose process died. Each UPDATE's
    condition is re-checked by the database on the row it changes, so of two processes racing
    for one conversation exactly one gets a row.
    """
    now = timezone.now()
    lease = {
        "turn_id": turn_id,
        "turn_lease_until": now + dt.timedelta(seconds=LEASE_SECONDS),
        "turn_cancel_requested": False,
    }
    rows = Conversation.objects.live().filter(pk=conversation_id)  # a binned one takes no turns
    if rows.filter(turn_id="").update(**lease):
        return False
    if rows.filter(turn_lease_until__lt=now).update(**lease):
        return True
    conversation_get(conversation_id=conversation_id)
    raise Conflict(BUSY)


def turn_release(*, conversation_id: int, turn_id: str) -> None:
    Conversation.objects.filter(pk=conversation_id, turn_id=turn_id).update(**NO_TURN)


def turn_begin(
    *,
    conversation_id: int | None,
    text: str,
    rerun: Rerun | None = None,
    message_id: int | None = None,
    origin: Origin = Origin.LIVE,
    model: str | None = None,
    attachments: list[int] | None = None,
) -> TurnStart:
    """Claim the conversation (making it, of ``origin``, when new, asking ``model``: see
    ``model_checked``; an existing one's is changed by ``conversation_model_set``), save the
    owner's message and allocate the assistant's. Raises ValidationFailed, NotFound or
    Conflict, keeping nothing.

    A retry, a regenerate or an edit (``rerun``) re-runs an owner message (agent/rerun.py); a
    regenerate's ``message_id`` must be the last reply: a page behind cannot replace it unseen.
    ``attachments``: live files for a new or edited message (agent/attachments.py)."""
    check_rerun(conversation_id=conversation_id, rerun=rerun, message_id=message_id)
    files = attachments_checked(attachments or [], rerun=rerun)
    turn_id = secrets.token_hex(16)
    if rerun not in ("retry", "regenerate"):
        text = _clean_owner_text(text)
    if conversation_id is None:
        return _turn_begin_new(
            text=text, turn_id=turn_id, origin=origin, model=model_checked(model), files=files
        )
    if model is not None:
        raise field_refused(
            "A model goes with a new conversation's first message; change an existing "
            "conversation's with PATCH /api/conversations/{id}.",
            field="model",
        )
    turn_claim(conversation_id=conversation_id, turn_id=turn_id)
    try:
        with transaction.atomic():
            interrupted_replies_close(conversation_id=conversation_id)
            owner_message, replaced = turn_target(
                conversation_id=conversation_id,
                text=text,
                rerun=rerun,
                message_id=message_id,
            )
            return _turn_messages_save(
                turn_id=turn_id, owner_message=owner_message, replaced=replaced, files=files
            )
    except BaseException:
        turn_release(conversation_id=conversation_id, turn_id=turn_id)
        raise


def _turn_begin_new(
    *, text: str, turn_id: str, origin: Origin, model: str, files: list[int]
) -> TurnStart:
    """``turn_begin`` in a new conversation, made with the turn's lease already held."""
    title = first_title(text=text)
    with transaction.atomic():
        conversation = Conversation.objects.create(
            title=title, turn_id=turn_id, turn_lease_until=_lease_end(), origin=origin, model=model
        )
        owner_message = Message.objects.create(
            conversation=conversation, role=Message.Role.USER, content=text
        )
        return _turn_messages_save(
            turn_id=turn_id, owner_message=owner_message, title=title, files=files
        )


def interrupted_replies_close(*, conversation_id: int) -> None:
    """With the lease held, no reply here can still be streaming: one that is was left by a turn
    whose lease expired (its process died) or that could not save its end."""
    Message.objects.filter(conversation_id=conversation_id, status=Message.Status.STREAMING).update(
        status=Message.Status.ERROR,
        error_code="INTERRUPTED",
        error_message=INTERRUPTED,
        updated_at=timezone.now(),
    )


def _turn_messages_save(
    *,
    turn_id: str,
    owner_message: Message,
    title: str | None = None,
    replaced: tuple[int, ...] = (),
    files: list[int] | None = None,
) -> TurnStart:
    """Save the owner's message when new, and the streaming reply; the turn's TurnStart."""
    new = owner_message.pk is None
    if new:
        owner_message.save()  # first: the owner's message always has the smaller id
    attached = message_attachments_set(message=owner_message, files=files or [], new=new)
    reply = Message.objects.create(
        conversation_id=owner_message.conversation_id,
        role=Message.Role.ASSISTANT,
        status=Message.Status.STREAMING,
        parent=owner_message,
    )
    _tell(owner_message.conversation_id, "turn")  # other pages show it and attach to the reply
    return TurnStart(
        conversation_id=owner_message.conversation_id,
        turn_id=turn_id,
        user_message_id=owner_message.pk,
        assistant_message_id=reply.pk,
        text=owner_message.content,
        title=title,
        replaced_message_ids=replaced,
        attachments=attached,
    )


def turn_heartbeat(*, conversation_id: int, turn_id: str, renew: bool) -> bool:
    """Whether the turn may go on: it still holds the lease and no cancel was asked for.

    With ``renew`` the lease is extended in the same statement; otherwise it is a plain read,
    which is what the runner does on most of its twice-a-second polls.
    """
    mine = Conversation.objects.filter(
        pk=conversation_id, turn_id=turn_id, turn_cancel_requested=False
    )
    if renew:
        return bool(mine.update(turn_lease_until=_lease_end()))
    return mine.exists()


def turn_cancel(*, conversation_id: int) -> bool:
    """Ask the turn running in this conversation, in whichever process, to stop.

    Returns False when no turn is running. The running turn notices within about half a second.
    """
    requested = (
        Conversation.objects.filter(pk=conversation_id, turn_lease_until__gte=timezone.now())
        .exclude(turn_id="")
        .update(turn_cancel_requested=True)
    )
    if not requested:
        conversation_get(conversation_id=conversation_id)
    return bool(requested)
