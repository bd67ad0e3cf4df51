"""Telling the owner and every open page what became of an approval.

A proposal is announced once, as an approval notification ("Waiting for your approval: …",
source ``approval:<id>``). Not announced when the owner is watching it being proposed: a
proposal in their own chat while a page follows the turn (agent/live/ready.py ``page_follows``)
shows its card right there, so its notification is only recorded, already read: no toast, no
unread count, no push, no channel (``seen``). Proposed where no page of theirs follows (a chat
they left, a /v1 client, MCP, an automation), it is announced as before. When the action is decided, undone, withdrawn or expires, that same
notification is rewritten to say what happened and marked read: it asked the owner to act, and
a decided approval needs nothing more, so it must neither keep asking nor count as unread.
Open pages receive the rewritten notification and a ``sync`` about the approval
(talorys/web/live.py), on which every approval card on them looks at its action again.

Deciding, undoing or withdrawing an approval makes no notification of its own: the owner did it
(or, withdrawn, the model did it in the chat they follow), so only the proposal's notification
is rewritten, read, and nothing is pushed or sent to a channel again.

Everything here is sent once the caller's transaction commits: a decision that rolls back tells
nobody anything.
"""

from __future__ import annotations

from collections.abc import Sequence

from approvals.models import PendingAction
from talorys.history.bin import BIN_RETENTION
from talorys.lib.validation import clip
from talorys.notifications import services as notify
from talorys.notifications.models import Notification
from talorys.web.live import pages_tell

EXPIRY_MINUTES = 30  # how long a proposal waits (services.EXPIRY)
UNDO_DAYS = BIN_RETENTION.days  # the undo window (services.UNDO_WINDOW) is the bin's retention

Status = PendingAction.Status


def notification_source(action: PendingAction) -> str:
    return f"approval:{action.pk}"


def _summary(action: PendingAction) -> str:
    return action.summary.strip() or action.tool


def tell_proposed(action: PendingAction, *, seen: bool = False) -> None:
    """Tell the owner that something waits for them, wherever they are (open pages, Web Push);
    ``seen``: they watch it being proposed, so it is only recorded (the module's docstring).

    Saved with the action, so a rolled-back proposal announces nothing; notification_send shows
    and pushes it only once this transaction commits. Only the summary goes out: the preview can
    hold the item's content, which has no place on a lock screen.
    """
    notify.notification_send(
        title=clip(f"Waiting for your approval: {_summary(action)}", Notification.TITLE_MAX),
        body=(f"Proposed by {action.proposed_by}. " if action.proposed_by else "")
        + f"Approve or reject it on the Approvals page within {EXPIRY_MINUTES} minutes.",
        kind=Notification.Kind.APPROVAL,
        source=notification_source(action),
        seen=seen,
    )
    tell_pages(action)


def tell_pages(action: PendingAction) -> None:
    """Every open page's cards for this action look at it again (their buttons, their state)."""
    pages_tell(
        "approval",
        action_id=action.pk,
        status=action.status,
        conversation_id=action.conversation_id,
    )


def outcome(action: PendingAction) -> notify.Rewrite:
    """What the approval's notification says once the action is no longer waiting."""
    undo = (
        f"You can undo it on the Approvals page for {UNDO_DAYS} days." if action.undo_until else ""
    )
    nothing = "Nothing was done."
    words = {
        Status.COMMITTED: ("Approved and done", undo),
        Status.FAILED: ("Approved but failed", action.error or nothing),
        Status.REJECTED: ("Rejected", nothing),
        Status.EXPIRED: (
            "Expired",
            f"Nobody approved it within {EXPIRY_MINUTES} minutes, so nothing was done.",
        ),
        Status.UNDONE: ("Undone", "What it changed was restored."),
        Status.WITHDRAWN: (
            "Withdrawn",
            "A newer proposal for the same item took its place, so nothing was done.",
        ),
    }
    head, body = words.get(Status(action.status), ("Waiting for your approval", ""))
    return notify.Rewrite(clip(f"{head}: {_summary(action)}", Notification.TITLE_MAX), body)


def tell_outcomes(actions: Sequence[PendingAction]) -> None:
    """Rewrite each action's notification to say what became of it (one UPDATE for them all),
    and tell open pages; on commit."""
    notify.notifications_update_by_source(
        {notification_source(action): outcome(action) for action in actions}
    )
    for action in actions:
        tell_pages(action)
