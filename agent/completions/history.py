"""Which Talorys conversation a client's chat continues.

An OpenAI client keeps the chat itself and resends all of it with every request: the system
message, each user message and each reply it was given, then the new user message. Talorys
keeps the same chat as a conversation, so only that new message is added, and the rest is
matched, never stored twice:

* the client's earlier user and assistant messages (its "prior"), compared with the shown
  messages of each conversation of origin ``api``, newest first: equal when each has the same
  role and the same words (whitespace aside), with the tool activity lines this endpoint wrote
  into its replies (``ACTIVITY_MARK``) left out, since a reply is saved without them. An
  exchange whose reply failed (an error, a cancel, nothing said) is left out too: the client
  was answered with an error, kept no reply, and sends that question again;
* no prior (a new chat): a new conversation of origin ``api``;
* a prior that no conversation matches (a chat begun with another model, or one whose earlier
  messages were edited in the client): a new conversation of origin ``api`` holding that prior
  as the client's history (``Origin.CLIENT``: data, shown to the model as what that client
  sent and never retried as live input), so that the model reads the chat it is answering and
  the client's next request matches it. How much of it may come, and how many new
  conversations a token may start a day: admission.py.

System and developer messages are not kept and not passed on: Talorys answers under its own
system prompt (its rules on approvals, tools and memories as data), and a client's prompt
("You are a helpful assistant", a persona) would compete with it, from anyone holding a token.
Tool and function messages (a client's own tools) are left out as well.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Exists, OuterRef

from agent.completions.schemas import CompletionMessage
from agent.models import Conversation, Message, Origin
from agent.selectors import shown_messages
from agent.services import MAX_MESSAGE_CHARS, first_title
from talorys.accounts.models import ApiToken
from talorys.lib.errors import ValidationFailed
from talorys.web.live import pages_tell

# The first character of the lines this endpoint writes for tool activity (replies.py).
ACTIVITY_MARK = "›"
# Conversations compared in full, newest first, among those that hold the prior's first message.
CANDIDATES = 20
_SPOKEN = ("user", "assistant")


@dataclass(frozen=True)
class ClientChat:
    """A request's chat: its earlier user and assistant messages, and the new user message."""

    prior: list[tuple[str, str]]
    text: str


def client_chat(messages: list[CompletionMessage]) -> ClientChat:
    """The chat a request carries; ValidationFailed when it does not end with the user's words."""
    spoken = [(str(m.role), m.text().strip()) for m in messages if m.role in _SPOKEN]
    if not spoken or spoken[-1][0] != "user" or not spoken[-1][1]:
        raise ValidationFailed("The last message must be the user's, with some text.")
    if len(spoken[-1][1]) > MAX_MESSAGE_CHARS:
        raise ValidationFailed(f"The last message is longer than {MAX_MESSAGE_CHARS} characters.")
    return ClientChat(prior=spoken[:-1], text=spoken[-1][1])


def _key(role: str, text: str) -> tuple[str, str]:
    """What two messages must share to be the same one: the role and the words."""
    lines = [line for line in text.splitlines() if not line.lstrip().startswith(ACTIVITY_MARK)]
    return role, "".join("".join(lines).split())


def _shown(conversation_id: int) -> list[tuple[str, str]]:
    """A conversation's messages as a client holds them: failed exchanges left out."""
    rows = list(
        shown_messages()
        .filter(conversation_id=conversation_id)
        .order_by("id")
        .values_list("role", "content", "status")
    )
    kept: list[tuple[str, str]] = []
    for role, content, status in rows:
        failed = status != Message.Status.COMPLETE and not content.strip()
        if role == Message.Role.ASSISTANT and failed:
            if kept and kept[-1][0] == Message.Role.USER:
                kept.pop()  # the question it failed to answer: the client asks it again
            continue
        kept.append(_key(role, content))
    return kept


def conversation_match(prior: list[tuple[str, str]]) -> int | None:
    """The newest live ``api`` conversation whose messages are ``prior``, or None."""
    if not prior:
        return None
    wanted = [_key(role, text) for role, text in prior]
    candidates = (
        Conversation.objects.live()
        .filter(origin=Origin.API, messages__content=prior[0][1], messages__replaced_at=None)
        .order_by("-updated_at", "-id")
        .values_list("pk", flat=True)
        .distinct()[:CANDIDATES]
    )
    for conversation_id in candidates:
        if _shown(conversation_id) == wanted:
            return conversation_id
    return None


def conversation_new(*, chat: ClientChat, token: ApiToken | None) -> int:
    """A new ``api`` conversation of ``token``'s client, holding the chat's prior (if any) as
    the client's history (``Origin.CLIENT``); its id. Called in the transaction that claims its
    first turn (admission.py), after the checks: nothing here refuses."""
    first_user = next((text for role, text in chat.prior if role == "user"), chat.text)
    conversation = Conversation.objects.create(
        title=first_title(text=first_user), origin=Origin.API, api_token=token
    )
    parent = None
    for role, text in chat.prior:  # one chain, each message following the one before
        parent = Message.objects.create(
            conversation=conversation,
            role=role,
            content=text,
            origin=Origin.CLIENT,
            parent=parent,
        )
    return conversation.pk


def conversation_discard(conversation_id: int) -> bool:
    """A new ``api`` conversation whose first turn failed having said and done nothing, deleted
    for good: it holds only what its client still has (the chat it sent) and the error that
    client was answered with, which the log keeps. So a failed request leaves no conversation in
    the chat list; the client's retry starts a new one, as it would have. Not one that a turn
    holds now, nor one with a reply that said something. Whether it was deleted."""
    answered = Message.objects.filter(
        conversation=OuterRef("pk"), role=Message.Role.ASSISTANT, origin=Origin.LIVE
    ).exclude(status=Message.Status.ERROR, content="", tool_activity=[])
    deleted, _ = (
        Conversation.objects.filter(pk=conversation_id, origin=Origin.API, turn_id="")
        .exclude(Exists(answered))
        .delete()
    )
    if deleted:  # open chat lists drop it (talorys/web/live.py)
        pages_tell("conversation", conversation_id=conversation_id, change="deleted")
    return bool(deleted)
