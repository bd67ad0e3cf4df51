"""What a retry, a regenerate or an edit re-runs, under the turn's lease (services.turn_begin).

Called inside turn_begin's transaction, so a refusal (ValidationFailed) changes nothing. A retry
drops the failed or stopped final reply; a regenerate and an edit replace instead of deleting:
the messages they take out keep their rows, marked ``replaced_at``, and every read of the
conversation (the model's history, the page, recall) leaves them out. They stay a branch of the
conversation's tree (each message has a ``parent``): the new reply is a sibling of the one
regenerated, the edited message a sibling of the one edited, and agent/branches.py switches back.
"""

from __future__ import annotations

from typing import Literal

from django.db.models import QuerySet
from django.utils import timezone

from agent.models import RECORDED, Conversation, Message, Origin
from agent.selectors import shown_messages
from talorys.lib.errors import ValidationFailed

# How a turn re-runs the conversation, if it does: one name, where the wire (ChatIn, the
# WebSocket's send frame) has a switch for each (``rerun_chosen``).
Rerun = Literal["retry", "regenerate", "edit"]


def _live_messages(conversation_id: int) -> QuerySet[Message]:
    return shown_messages().filter(conversation_id=conversation_id)


def _last_owner_message(*, conversation_id: int, verb: str, done: str) -> Message:
    owner_message = (
        _live_messages(conversation_id).filter(role=Message.Role.USER).order_by("-id").first()
    )
    if owner_message is None:
        raise ValidationFailed(f"There is no message of yours to {verb} in this conversation.")
    if owner_message.origin in RECORDED:
        # Imported, or a /v1 client's history: never typed into this chat, so data, not an
        # instruction.
        raise ValidationFailed(f"{_recorded(owner_message)} cannot be {done}; send a new message.")
    return owner_message


def _recorded(message: Message) -> str:
    if message.origin == Origin.CLIENT:
        return "A message a chat client sent as this chat's history"
    return "An imported message"


def path_tip(conversation_id: int) -> Message | None:
    """The last message of the active branch: the one a new message follows."""
    return _live_messages(conversation_id).order_by("-id").first()


def summary_scope(*, conversation_id: int, changed_from: int) -> None:
    """Drop the running summary when the active branch changes at or before the last message it
    covers (``summary_upto``): it would tell the model of messages the new branch does not hold.
    The next turn whose window overflows writes a new one from the branch it sees."""
    Conversation.objects.filter(pk=conversation_id, summary_upto__gte=changed_from).update(
        summary="", summary_upto=None
    )


def _replace(messages: QuerySet[Message]) -> tuple[int, ...]:
    """Take messages out of the conversation without deleting them; their ids, oldest first.
    ``updated_at`` moves too: the recall index re-reads them and drops them."""
    ids = tuple(messages.order_by("id").values_list("pk", flat=True))
    now = timezone.now()
    Message.objects.filter(pk__in=ids).update(replaced_at=now, updated_at=now)
    return ids


def retry_target(*, conversation_id: int) -> Message:
    """The owner message a retry re-runs; drops a non-complete final reply. Needs the lease."""
    last = path_tip(conversation_id)
    if last is not None and last.role == Message.Role.ASSISTANT:
        if last.status == Message.Status.COMPLETE:
            raise ValidationFailed(
                "The last reply is complete, so there is nothing to retry; send a new message."
            )
        last.delete()
    return _last_owner_message(conversation_id=conversation_id, verb="retry", done="retried")


def regenerate_target(
    *, conversation_id: int, message_id: int | None
) -> tuple[Message, tuple[int, ...]]:
    """The owner message a regenerate re-runs, and the complete reply it replaces (kept)."""
    last = path_tip(conversation_id)
    if last is None or last.role != Message.Role.ASSISTANT:
        raise ValidationFailed("There is no reply to regenerate in this conversation.")
    if last.status != Message.Status.COMPLETE:
        raise ValidationFailed("The last reply did not complete: retry it instead.")
    if message_id is not None and message_id != last.pk:
        raise ValidationFailed("Only the last reply can be regenerated.")
    owner_message = _last_owner_message(
        conversation_id=conversation_id, verb="regenerate", done="regenerated"
    )
    replaced = _replace(_live_messages(conversation_id).filter(pk__gt=owner_message.pk))
    summary_scope(conversation_id=conversation_id, changed_from=min(replaced))
    return owner_message, replaced


def _edited(*, conversation_id: int, message_id: int | None) -> Message:
    """The owner message an edit starts from: ``message_id`` (any of the owner's on the active
    branch), or the owner's last one."""
    if message_id is None:
        return _last_owner_message(conversation_id=conversation_id, verb="edit", done="edited")
    edited = _live_messages(conversation_id).filter(pk=message_id).first()
    if edited is None or edited.role != Message.Role.USER:
        raise ValidationFailed(
            "Only your own messages in the conversation as it is shown can be edited; "
            "reload it and try again."
        )
    if edited.origin in RECORDED:
        raise ValidationFailed(f"{_recorded(edited)} cannot be edited; send a new message.")
    return edited


def edit_target(
    *, conversation_id: int, text: str, message_id: int | None
) -> tuple[Message, tuple[int, ...]]:
    """The edited message's new text, saved as a new message beside it (same parent): a new
    branch from there. The old message and all that followed it on the active branch are
    replaced (kept, and reachable again by a switch)."""
    edited = _edited(conversation_id=conversation_id, message_id=message_id)
    replaced = _replace(_live_messages(conversation_id).filter(pk__gte=edited.pk))
    summary_scope(conversation_id=conversation_id, changed_from=edited.pk)
    owner_message = Message.objects.create(
        conversation_id=conversation_id,
        role=Message.Role.USER,
        content=text,
        parent_id=edited.parent_id,
    )
    return owner_message, replaced


def rerun_chosen(*, retry: bool, regenerate: bool, edit: bool) -> Rerun | None:
    """The one re-run the wire's switches ask for, or None; ValidationFailed for more than one."""
    switches: tuple[tuple[Rerun, bool], ...] = (
        ("retry", retry),
        ("regenerate", regenerate),
        ("edit", edit),
    )
    chosen = [name for name, on in switches if on]
    if len(chosen) > 1:
        raise ValidationFailed(
            f"Ask for one of retry, regenerate or edit, not {' and '.join(chosen)}."
        )
    return chosen[0] if chosen else None


def check_rerun(
    *, conversation_id: int | None, rerun: Rerun | None, message_id: int | None
) -> None:
    if rerun is not None and conversation_id is None:
        article = "An" if rerun == "edit" else "A"
        raise ValidationFailed(f"{article} {rerun} needs the conversation_id it applies to.")
    if message_id is not None and rerun not in ("regenerate", "edit"):
        raise ValidationFailed("message_id goes with regenerate or edit.")


def turn_target(
    *,
    conversation_id: int,
    text: str,
    rerun: Rerun | None,
    message_id: int | None,
) -> tuple[Message, tuple[int, ...]]:
    """The owner message a turn answers (unsaved when new), and the ids it replaced: what
    ``turn_begin`` saves with the reply."""
    if rerun == "retry":
        return retry_target(conversation_id=conversation_id), ()
    if rerun == "regenerate":
        return regenerate_target(conversation_id=conversation_id, message_id=message_id)
    if rerun == "edit":
        return edit_target(conversation_id=conversation_id, text=text, message_id=message_id)
    return Message(
        conversation_id=conversation_id,
        role=Message.Role.USER,
        content=text,
        parent=path_tip(conversation_id),
    ), ()
