"""Approve or reject from the Web Push notification, without opening a page.

The push of a waiting approval carries Approve and Reject actions, each with its own capability:
a random token minted for that push delivery and that decision (only its SHA-256 is stored,
DecisionCapability). The service worker (static/talorys/sw.js) posts the token back when an
action button is clicked; the token, not the session, is the credential, so the endpoint reads
no cookie. A capability decides only its own action, only the decision it was minted for, once,
before it expires, while the action still waits and is still the proposal it was minted for.
The decision itself goes through the same services as the page (approve commits, stale target
included), audited as the owner "via notification", and the notification is rewritten as usual.
Spending is a conditional UPDATE (``used_at`` from null) in the transaction that then locks the
action and decides, so of two uses of one token one decides and the other finds it used; a
refusal under the lock rolls the spending back.

Threat model. The token exists in clear only in this server's memory while the push is built,
in the push payload and on the device. The payload is end-to-end encrypted to the browser's
subscription keys (RFC 8291), so the push service relays ciphertext; the database and backups
hold the hash only. Each check stops one thing: single use stops a replay, and a decided or
expired action makes a seen token useless; 256 random bits and the refusal throttle stop
guessing; binding to the action and the decision stops moving a token to another approval;
binding to the snapshot (and a new action id per proposal) stops an old push deciding a newer
proposal; the commit's own snapshot check stops acting on a target changed since. CSRF: the
route ignores cookies, so a forged request carries no credential that helps; JSON only (a CORS
preflight, never answered) is belt and braces. Not stopped: someone holding the unlocked device
while the approval waits can press Approve, as on an open session's page; and anyone reading
the browser's profile while the notification is shown could take the token. Apprise channels
(e-mail, chat services) are not end-to-end encrypted and are often forwarded, so they get only
the link to the approval's page, which needs the session.
"""

from __future__ import annotations

import hashlib
import secrets
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from approvals import services
from approvals.models import DecisionCapability, PendingAction
from approvals.telling import outcome
from talorys.accounts.counters import counter_hit
from talorys.lib.errors import AppError, Conflict, Forbidden, RateLimited
from talorys.notifications.models import Notification, PushDelivery

Decision = DecisionCapability.Decision
VIA = "notification"
# secrets.token_urlsafe(32): 43 characters. Anything far off that is not ours.
TOKEN_MAX = 64
# The buttons a push shows, in the service worker's Notification "actions" shape.
ACTIONS = [
    {"action": Decision.APPROVE.value, "title": "Approve"},
    {"action": Decision.REJECT.value, "title": "Reject"},
]

# The refusals, one message each: the service worker shows it as "Could not approve: …".
FORGED = "This notification's button is not valid. Open the approval to decide."
OTHER = "This button was made for another decision. Open the approval to decide."
USED = "This notification's button was already used. Open the approval to see what happened."
EXPIRED = "This notification's button expired. Open the approval to decide."
CHANGED = "This approval changed since the notification was sent. Open it to decide."


# A valid capability always decides. Its refusals are throttled per approval and per capability
# (not per client address, which anyone sharing the owner's network shares): past these many
# refusals in a window, a refused request is answered 429 instead. A guessed token never matches
# (256 bits); this only tells a flood to stop, and a button pressed again and again to open the
# approval instead. Counted only for an approval and a capability that exist, so a flood of
# made-up ones leaves no counters behind.
REFUSALS_PER_APPROVAL = 30
REFUSALS_PER_CAPABILITY = 10
REFUSAL_WINDOW = 600  # seconds
THROTTLED = "Too many refused decisions for this approval. Open the approval to decide."


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


# --- minting: the push's extra fields --------------------------------------------------------


def push_extra(notification: Notification, delivery: PushDelivery | None) -> dict[str, Any]:
    """The actions and their capabilities for the push of an approval's notification, while the
    action waits and has not expired; nothing otherwise (the push then only opens the page).

    Registered with talorys.notifications.push in ApprovalsConfig.ready."""
    key = notification.source.partition(":")[2]
    action = PendingAction.objects.filter(
        pk=int(key) if key.isdigit() else 0,
        status=PendingAction.Status.PENDING,
        expires_at__gt=timezone.now(),
    ).first()
    if action is None:
        return {}
    tokens = {decision: secrets.token_urlsafe(32) for decision in Decision.values}
    DecisionCapability.objects.bulk_create(
        DecisionCapability(
            action=action,
            decision=decision,
            token_hash=token_hash(token),
            snapshot=action.snapshot,
            delivery_id=delivery.pk if delivery is not None else None,
            expires_at=action.expires_at,
        )
        for decision, token in tokens.items()
    )
    return {
        "actions": ACTIONS,
        "decide": {"url": f"/api/approvals/{action.pk}/push-decision", "capabilities": tokens},
    }


# --- deciding --------------------------------------------------------------------------------


def push_decide_throttled(*, action_id: int, decision: str, token: str) -> PendingAction:
    """``push_decide``, its refusals counted: past the limits a refusal is a 429 instead.

    The capability is always looked at first (one indexed read), so a valid one decides however
    many forged ones came before it."""
    try:
        return push_decide(action_id=action_id, decision=decision, token=token)
    except AppError as refused:
        if _refusal_count_passes_limit(action_id=action_id, token=token):
            raise RateLimited(THROTTLED, retry_after=REFUSAL_WINDOW) from refused
        raise


def _refusal_count_passes_limit(*, action_id: int, token: str) -> bool:
    """Count one refusal against the approval and the capability (those that exist); whether
    either is now past its limit."""
    digest = token_hash(token)
    limits = []
    if PendingAction.objects.filter(pk=action_id).exists():
        limits.append((f"push-decision-refusals:action:{action_id}", REFUSALS_PER_APPROVAL))
    if DecisionCapability.objects.filter(token_hash=digest).exists():
        limits.append((f"push-decision-refusals:token:{digest[:32]}", REFUSALS_PER_CAPABILITY))
    counts = [counter_hit(key, window=REFUSAL_WINDOW) for key, _ in limits]
    return any(count > limit for count, (_key, limit) in zip(counts, limits, strict=True))


def push_decide(*, action_id: int, decision: str, token: str) -> PendingAction:
    """Make ``decision`` on the action with the capability ``token``; the decided action.

    Every refusal raises before anything is changed (a refusal under the lock rolls the spent
    capability back). Of two requests with the same token, one decides: the capability is
    spent with a conditional UPDATE, which the second waits for and then finds done.
    """
    capability = _capability(action_id=action_id, decision=decision, token=token)
    # An expiry that is due is recorded by the service under the row lock, in its own
    # transaction, as the page's decisions do, so the refusal below keeps it.
    services.pending_action_expire_if_due(action_id=action_id)
    decide = (
        services.pending_action_approve
        if decision == Decision.APPROVE
        else services.pending_action_reject
    )
    with transaction.atomic():
        now = timezone.now()
        spent = DecisionCapability.objects.filter(pk=capability.pk, used_at__isnull=True).update(
            used_at=now
        )
        if not spent:
            raise Conflict(USED)
        # Under the action's lock, in this transaction: a decided or expired action is refused
        # there (Conflict), and the spent capability rolls back with it.
        _same_proposal(action_id=action_id, capability=capability)
        return decide(action_id=action_id, user=_the_owner(), via=VIA)


def _capability(*, action_id: int, decision: str, token: str) -> DecisionCapability:
    """The capability the token names, if it is for this action and decision and unexpired."""
    if decision not in Decision.values:
        raise Forbidden(OTHER)
    if not token or len(token) > TOKEN_MAX:
        raise Forbidden(FORGED)
    capability = DecisionCapability.objects.filter(token_hash=token_hash(token)).first()
    if capability is None:
        raise Forbidden(FORGED)
    if capability.action_id != action_id or capability.decision != decision:
        raise Forbidden(OTHER)
    if capability.used_at is not None:
        raise Conflict(USED)
    if capability.expires_at <= timezone.now():
        raise Conflict(EXPIRED)
    return capability


def _same_proposal(*, action_id: int, capability: DecisionCapability) -> None:
    """Refuse when the action is not the proposal the capability was minted for (its snapshot
    of the target differs). A proposal made again keeps its snapshot, so this holds while the
    same change waits; it is the capability's own check, before the commit's check that the
    target itself has not changed since (a stale target fails the commit, as on the page)."""
    snapshot = (
        PendingAction.objects.select_for_update()
        .filter(pk=action_id)
        .values_list("snapshot", flat=True)
        .first()
    )
    if snapshot is not None and snapshot != capability.snapshot:
        raise Conflict(CHANGED)


def _the_owner() -> Any:
    """The owner this single-person install serves: who decided, on the action and its audit
    line (the capability stands in for their session)."""
    owner = (
        get_user_model().objects.filter(is_active=True, is_superuser=True).order_by("pk").first()
    )
    if owner is None:
        raise Forbidden("No owner account is active, so nothing can be decided.")
    return owner


def push_decision_outcome(action: PendingAction) -> dict[str, Any]:
    """What the service worker shows once it decided: the notification's new words."""
    rewrite = outcome(action)
    return {
        "action_id": action.pk,
        "status": action.status,
        "title": rewrite.title,
        "body": rewrite.body,
    }
