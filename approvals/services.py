"""Propose, approve, reject, expire and undo destructive model actions; one waiting proposal per
tool and target (proposing it again reuses it or withdraws it, see pending_action_propose).

Each change is told on commit (approvals/telling.py): the approval's notification says what
became of it, and open pages' approval cards look again.

The commit path finds the tool by name in the registry (talorys/lib/tools.py), so approvals never
imports the app that owns the data.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import logging
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from approvals.models import ApprovalEvent, DecisionCapability, PendingAction
from approvals.telling import EXPIRY_MINUTES, tell_outcomes, tell_pages, tell_proposed
from talorys.accounts.models import ApiToken
from talorys.history.bin import BIN_RETENTION
from talorys.lib.errors import AppError, Conflict, NotFound
from talorys.lib.tools import (
    NEW_TARGET,
    Permission,
    Proposal,
    Tool,
    ToolContext,
    ToolError,
    get_tool,
)
from talorys.lib.validation import one_line

log = logging.getLogger(__name__)

EXPIRY = dt.timedelta(minutes=EXPIRY_MINUTES)
# Undo restores from the bin, so it lasts exactly as long as the bin keeps what was deleted.
UNDO_WINDOW = BIN_RETENTION
RETENTION = dt.timedelta(days=30)
CAPABILITY_KEPT = dt.timedelta(days=1)
STALE_MESSAGE = (
    "This item changed after it was proposed, so nothing was done. Ask again to get a new approval."
)


def _event(action: PendingAction, *, kind: str, actor: str, detail: str = "") -> None:
    _event_row(action, kind=kind, actor=actor, detail=detail).save()


def _event_row(action: PendingAction, *, kind: str, actor: str, detail: str = "") -> ApprovalEvent:
    return ApprovalEvent(
        action=action,
        action_ref=action.pk,
        tool=action.tool,
        target_id=action.target_id,
        summary=action.summary,
        kind=kind,
        actor=actor,
        detail=detail,
    )


def _owner(user: Any, via: str = "") -> str:
    """The owner on the audit trail; ``via`` says where they decided when not on a page
    ("notification": approvals/push_decision.py)."""
    who = f"owner:{user.get_username()}" if user is not None else "owner"
    return f"{who} via {via}" if via else who


def _destructive_tool(name: str) -> Tool:
    tool = get_tool(name, mode="chat")
    if tool is None or tool.permission != Permission.DESTRUCTIVE:
        raise NotFound(f"No destructive tool named {name!r}.")
    return tool


def _proposal(action: PendingAction) -> Proposal:
    return Proposal(
        target_id=action.target_id,
        snapshot=action.snapshot,
        summary=action.summary,
        payload=action.payload,
        preview=action.preview,
    )


def pending_action_propose(
    *, tool: Tool, proposal: Proposal, ctx: ToolContext, seen: bool = False
) -> PendingAction:
    """Store a prepared destructive call. Nothing about the target changes here. ``seen``: the
    owner watches it being proposed (telling.py), so its notification is only recorded.

    The owner is asked once per tool and target. A regenerated, retried or edited reply that
    proposes again exactly what is already waiting (same payload, target unchanged since) gets
    that action back, marked ``reused`` (``_propose_again``). A different proposal for the same
    target withdraws the waiting one and is asked instead; one that makes something new
    (``NEW_TARGET``) only ever reuses an identical one. Racing proposals queue for each other
    (``_queue_for_target``), and the constraint of one waiting action per tool and target backs
    that up.

    Each proposal also prunes the decided actions past ``RETENTION``, so the table stays
    bounded even where beat does not run.
    """
    with transaction.atomic():
        _queue_for_target(tool.name, proposal.target_id)
        _prune_decided(now=timezone.now())
        return _propose(tool, proposal, ctx, seen=seen)


def _queue_for_target(tool: str, target_id: int) -> None:
    """Wait until no other transaction is proposing for this tool and target (PostgreSQL: an
    advisory lock held to the end of the transaction, so the next proposer reads this one's
    action once it is committed). SQLite runs one writing transaction at a time (settings:
    IMMEDIATE), so there proposals queue already. A row lock would not do: before the first
    proposal there is no row to lock."""
    if connection.vendor != "postgresql":
        return
    key = hashlib.blake2b(f"approval:{tool}:{target_id}".encode(), digest_size=8).digest()
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [int.from_bytes(key, signed=True)])


def _propose(tool: Tool, proposal: Proposal, ctx: ToolContext, *, seen: bool) -> PendingAction:
    now = timezone.now()
    waiting = []
    for action in PendingAction.objects.select_for_update().filter(
        tool=tool.name, target_id=proposal.target_id, status=PendingAction.Status.PENDING
    ):
        if action.expires_at <= now:
            _expire(action)  # not waiting any more, whatever it proposed
        else:
            waiting.append(action)
    for action in waiting:
        if (action.payload, action.snapshot) == (proposal.payload, proposal.snapshot):
            return _propose_again(action, ctx)
    # Something new has no target that two proposals compete for: both wait.
    earlier = waiting[0] if waiting and proposal.target_id != NEW_TARGET else None
    if earlier is not None:  # first, so that the new one is the only one waiting
        PendingAction.objects.filter(pk=earlier.pk).update(
            status=PendingAction.Status.WITHDRAWN, decided_at=now
        )
        earlier.status = PendingAction.Status.WITHDRAWN
    action = PendingAction.objects.create(
        tool=tool.name,
        target_id=proposal.target_id,
        snapshot=proposal.snapshot,
        payload=proposal.payload,
        summary=one_line(proposal.summary)[: PendingAction.SUMMARY_MAX],
        preview=proposal.preview,
        proposed_by=_proposed_by(ctx),
        conversation_id=ctx.conversation_id,
        message_id=ctx.message_id,
        expires_at=timezone.now() + EXPIRY,
    )
    _event(action, kind=ApprovalEvent.Kind.PROPOSED, actor=_proposer(ctx))
    if earlier is not None:
        why = (
            "The item changed since it was proposed"
            if earlier.payload == action.payload
            else "A different change to the same item was proposed"
        )
        detail = f"{why}: approval #{action.pk} asks instead."
        _event(earlier, kind=ApprovalEvent.Kind.WITHDRAWN, actor=_proposer(ctx), detail=detail)
        tell_outcomes([earlier])
    tell_proposed(action, seen=seen)
    return action


def _proposer(ctx: ToolContext) -> str:
    """Who asked, on the audit trail: "model" for a chat turn, else its source (an automation,
    an MCP client's token)."""
    return "model" if ctx.source == "chat" else ctx.source


def _proposed_by(ctx: ToolContext) -> str:
    """Who proposes, in the owner's words: the caller's own (a /v1 client, an automation, which
    know their names), else from the source (an MCP client or API token by its name)."""
    if ctx.proposer:
        return ctx.proposer[:200]
    if ctx.source == "chat":
        return "the chat"
    kind, _, prefix = ctx.source.partition(":")
    if kind in ("mcp", "token"):
        token = ApiToken.objects.filter(prefix=prefix).order_by("-id").first()
        client = "the MCP client" if kind == "mcp" else "the API token"
        return f"{client} “{token.name}”"[:200] if token else client
    if kind == "automation":
        return "an automation"
    return ctx.source[:200]


def _propose_again(action: PendingAction, ctx: ToolContext) -> PendingAction:
    """The same proposal again, from a new reply: the waiting action moves under that reply
    (its card shows there) and keeps its expiry, so proposing again cannot keep an approval
    waiting past its 30 minutes (its push's capabilities expire with it; once expired, a
    proposal is a new action); the owner is not asked twice."""
    if ctx.conversation_id is not None:
        action.conversation_id, action.message_id = ctx.conversation_id, ctx.message_id
    action.save(update_fields=["conversation_id", "message_id"])
    _event(
        action,
        kind=ApprovalEvent.Kind.PROPOSED,
        actor=_proposer(ctx),
        detail="Proposed again while it was waiting; the same approval still waits.",
    )
    tell_pages(action)
    action.reused = True
    return action


def pending_action_expire_if_due(*, action_id: int) -> None:
    """Record an expiry that is due, under the row lock, in its own transaction: a decision
    that the expiry refuses rolls its own transaction back, and the expiry stays recorded.
    Deciders call it; reads never do (approvals.selectors reads a due expiry as expired)."""
    with transaction.atomic():
        action = (
            PendingAction.objects.select_for_update()
            .filter(pk=action_id, status=PendingAction.Status.PENDING)
            .first()
        )
        if action is not None and action.expires_at <= timezone.now():
            _expire(action)


def _expire(action: PendingAction) -> None:
    # The status and its audit line are written together, or neither is.
    with transaction.atomic():
        updated = PendingAction.objects.filter(
            pk=action.pk, status=PendingAction.Status.PENDING
        ).update(status=PendingAction.Status.EXPIRED, decided_at=timezone.now())
        if updated:
            action.status = PendingAction.Status.EXPIRED
            _event(action, kind=ApprovalEvent.Kind.EXPIRED, actor="system")
            tell_outcomes([action])


def _lock_pending(*, action_id: int) -> PendingAction:
    """The action, locked, if it is still pending and unexpired; otherwise a clear refusal.

    Call inside a transaction: the row lock makes concurrent deciders queue, and each re-checks
    the state under the lock.
    """
    action = PendingAction.objects.select_for_update().filter(pk=action_id).first()
    if action is None:
        raise NotFound(f"Approval {action_id} does not exist.")
    if action.status == PendingAction.Status.EXPIRED or (
        action.status == PendingAction.Status.PENDING and action.expires_at <= timezone.now()
    ):
        raise Conflict("This approval expired, so nothing was done. Ask again to get a new one.")
    if action.status != PendingAction.Status.PENDING:
        raise Conflict(f"This approval was already decided: {action.status}.")
    return action


def pending_action_approve(*, action_id: int, user: Any, via: str = "") -> PendingAction:
    """Approve and commit, at most once however many approvals race.

    Checking the state, re-checking the target's snapshot and committing happen in one
    transaction under the action's row lock, so there is no moment where an action is claimed
    but not carried out, and a second approver waits and then finds it decided.
    """
    pending_action_expire_if_due(action_id=action_id)
    with transaction.atomic():
        action = _lock_pending(action_id=action_id)
        tool = _destructive_tool(action.tool)
        failure = ""
        try:
            with transaction.atomic():  # a savepoint: a failed commit leaves nothing behind
                if tool.snapshot(action.target_id) != action.snapshot:
                    raise ToolError(STALE_MESSAGE, code="STALE")
                result = tool.commit(
                    _proposal(action), ToolContext(mode="chat", source=_owner(user, via))
                )
        # A tool's own refusal, or a service's clear error (the target is gone...), is told to
        # the owner as is; anything else is logged and reported generically.
        except AppError as exc:
            failure = exc.message
        except Exception:
            log.exception("Commit of approval %s (%s) failed", action.pk, action.tool)
            failure = "The change could not be carried out, so nothing was done."
        if failure:
            action.error = failure
            return _decided(action, PendingAction.Status.FAILED, user, via, "error", detail=failure)
        action.result = result
        action.undo_until = timezone.now() + UNDO_WINDOW if result.get("undoable") else None
        return _decided(action, PendingAction.Status.COMMITTED, user, via, "result", "undo_until")


def pending_action_reject(*, action_id: int, user: Any, via: str = "") -> PendingAction:
    pending_action_expire_if_due(action_id=action_id)
    with transaction.atomic():
        action = _lock_pending(action_id=action_id)
        return _decided(action, PendingAction.Status.REJECTED, user, via)


def _decided(
    action: PendingAction, status: str, user: Any, via: str, *fields: str, detail: str = ""
) -> PendingAction:
    """Save the owner's decision with ``fields`` already set on the locked action, its audit
    line (of the kind named as the status) and its notification."""
    action.status, action.decided_at, action.decided_by = status, timezone.now(), user
    action.save(update_fields=["status", "decided_at", "decided_by", *fields])
    _event(action, kind=ApprovalEvent.Kind(status), actor=_owner(user, via), detail=detail)
    tell_outcomes([action])
    return action


def pending_action_undo(*, action_id: int, user: Any) -> PendingAction:
    """Restore what a committed deletion or rewrite changed, within the undo window."""
    with transaction.atomic():
        action = PendingAction.objects.select_for_update().filter(pk=action_id).first()
        if action is None:
            raise NotFound(f"Approval {action_id} does not exist.")
        if action.status != PendingAction.Status.COMMITTED:
            raise Conflict(f"Only a carried-out action can be undone; this one is {action.status}.")
        if action.undo_until is None or action.undo_until <= timezone.now():
            raise Conflict("This action can no longer be undone.")
        tool = _destructive_tool(action.tool)
        try:
            tool.undo(_proposal(action), action.result)
        except AppError as exc:  # told to the owner as a conflict with the item's state
            raise Conflict(exc.message) from exc
        action.status, action.undone_at = PendingAction.Status.UNDONE, timezone.now()
        action.save(update_fields=["status", "undone_at"])
        _event(action, kind=ApprovalEvent.Kind.UNDONE, actor=_owner(user))
        tell_outcomes([action])
    return action


def pending_actions_expire() -> int:
    """Mark every pending action past its expiry as expired, each with its audit line.

    Returns how many. The beat job (approvals.tasks.expire_pending_actions) calls it every
    minute; until then the selectors read a due expiry as expired. It takes the same few
    queries however many are due (their notifications are rewritten in one UPDATE too). Rows a
    decider holds are skipped, not waited for: the decider sees the expiry itself, and the next
    call records it.
    """
    now = timezone.now()
    with transaction.atomic():
        due = list(
            PendingAction.objects.select_for_update(skip_locked=True).filter(
                status=PendingAction.Status.PENDING, expires_at__lte=now
            )
        )
        if not due:
            return 0
        PendingAction.objects.filter(pk__in=[action.pk for action in due]).update(
            status=PendingAction.Status.EXPIRED, decided_at=now
        )
        ApprovalEvent.objects.bulk_create(
            [_event_row(action, kind=ApprovalEvent.Kind.EXPIRED, actor="system") for action in due]
        )
        for action in due:
            action.status = PendingAction.Status.EXPIRED
        tell_outcomes(due)
    return len(due)


def pending_actions_prune() -> int:
    """Delete decided actions older than the retention window (their audit lines stay), and
    the notifications' decision capabilities a day after they expired (until then a reused one
    is refused as used, not as unknown)."""
    now = timezone.now()
    capabilities, _ = DecisionCapability.objects.filter(
        expires_at__lt=now - CAPABILITY_KEPT
    ).delete()
    with transaction.atomic():
        deleted = _prune_decided(now=now)
    return capabilities + deleted


def _prune_decided(*, now: dt.datetime) -> int:
    """Delete the decided actions proposed more than ``RETENTION`` ago (their audit lines stay,
    and their capabilities go with them); returns how many rows went. Waiting actions stay, and
    so do committed ones still inside their undo window, so that undo keeps working.

    Call inside a transaction. Rows another pruner (the beat job, a concurrent proposal) holds
    are skipped, not waited for: that one deletes them, and two pruners never deadlock."""
    old = PendingAction.objects.filter(created_at__lt=now - RETENTION).exclude(
        status=PendingAction.Status.PENDING
    )
    old = old.exclude(status=PendingAction.Status.COMMITTED, undo_until__gt=now)
    ids = list(old.select_for_update(skip_locked=True).values_list("pk", flat=True))
    if not ids:
        return 0
    deleted, _ = PendingAction.objects.filter(pk__in=ids).delete()
    return deleted
