"""Web Push: the VAPID key, the browsers' subscriptions, and delivery with every outcome kept.

A notification makes one PushDelivery per active subscription (services.py), which goes
through the states outbox.py keeps for every delivery (claimed once, held in quiet hours,
retried, flushed). The push service is called outside any transaction, at the address
push_endpoints.py resolved and checked (a public one, unless the operator allowed the host).
What it answers is recorded on the delivery: sent; gone (404 or 410: the browser dropped the
subscription, which is deactivated); retried later (429, 5xx, network errors, a name that does
not resolve) up to MAX_ATTEMPTS; failed (anything else, an endpoint that is not a public push
service, or out of attempts).
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import json
import logging
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import requests
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone
from py_vapid import Vapid
from py_vapid.utils import b64urlencode

from talorys.lib.errors import NotFound, ValidationFailed
from talorys.lib.markdown_text import markdown_to_text
from talorys.lib.validation import clip
from talorys.notifications import outbox
from talorys.notifications.models import Notification, PushDelivery, PushSubscription
from talorys.notifications.outbox import hold_or_claim, record, settle
from talorys.notifications.push_endpoints import (
    EndpointRefused,
    Target,
    endpoint_check,
    endpoint_target,
    push_session,
)

log = logging.getLogger(__name__)

VAPID_KEY_FILE = "vapid_private_key.pem"
SEND_TIMEOUT = 10  # seconds
PUSH_TTL = 24 * 3600  # how long the push service keeps it for an offline browser
PAYLOAD_BODY = 1000  # chars: a push message carries at most ~4 KB
RETRYABLE = {408, 425, 429, 500, 502, 503, 504}

Status = PushDelivery.Status


# --- the VAPID key -----------------------------------------------------------------------------


def vapid_key_path() -> Path:
    return settings.DATA_DIR / VAPID_KEY_FILE


def vapid_key_ensure() -> Path | None:
    """Generate the private key into the data dir (mode 0600) unless the environment gives one.

    Returns the key file, or None when the key comes from the environment.
    """
    if settings.TALORYS_VAPID_PRIVATE_KEY:
        return None
    path = vapid_key_path()
    if path.exists():
        return path
    key = Vapid()
    key.generate_keys()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process generated it first: use theirs
        return path
    with os.fdopen(fd, "wb") as fh:
        fh.write(key.private_pem())
    return path


def vapid() -> Vapid:
    raw = settings.TALORYS_VAPID_PRIVATE_KEY.replace("\\n", "\n").strip()
    if raw:
        return Vapid.from_pem(raw.encode()) if "-----BEGIN" in raw else Vapid.from_string(raw)
    path = vapid_key_ensure()
    assert path is not None
    return Vapid.from_pem(path.read_bytes())


def vapid_public_key() -> str:
    """The application server key a browser passes to ``pushManager.subscribe``."""
    point = vapid().public_key.public_bytes(Encoding.X962, PublicFormat.UncompressedPoint)
    return b64urlencode(point)


# --- subscriptions -----------------------------------------------------------------------------


def _b64url_bytes(value: str, *, field: str, length: int) -> bytes:
    try:
        raw = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) != length:
        raise ValidationFailed(f"keys.{field} is not a valid base64url key from PushSubscription.")
    return raw


def push_subscription_list() -> QuerySet[PushSubscription]:
    return PushSubscription.objects.all()


def push_subscription_create(
    *, endpoint: str, p256dh: str, auth: str, user_agent: str = ""
) -> PushSubscription:
    """Save a browser's subscription; subscribing the same endpoint again refreshes its keys.

    The endpoint must be a public push service (push_endpoints.endpoint_check), checked last:
    it may resolve a name."""
    if _b64url_bytes(p256dh, field="p256dh", length=65)[0] != 0x04:
        raise ValidationFailed("keys.p256dh is not an uncompressed P-256 public key.")
    _b64url_bytes(auth, field="auth", length=16)
    endpoint = endpoint_check(endpoint.strip())
    subscription, _ = PushSubscription.objects.update_or_create(
        endpoint=endpoint,
        defaults={
            "p256dh": p256dh,
            "auth": auth,
            "user_agent": user_agent[: PushSubscription.USER_AGENT_MAX],
            "active": True,
            "deactivated_at": None,
        },
    )
    return subscription


def push_subscription_delete(*, subscription_id: int) -> None:
    deleted, _ = PushSubscription.objects.filter(pk=subscription_id).delete()
    if not deleted:
        raise NotFound(f"Push subscription {subscription_id} does not exist.")


# --- deliveries --------------------------------------------------------------------------------


def push_deliveries_create(
    *, notifications: Sequence[Notification], now: dt.datetime | None = None
) -> list[int]:
    """One delivery per notification and active subscription, in one INSERT. Returns the ids to
    send now (none in quiet hours)."""
    subscriptions = list(PushSubscription.objects.filter(active=True))
    rows = [{"notification": n, "subscription": s} for n in notifications for s in subscriptions]
    return outbox.deliveries_create(PushDelivery, rows, now or timezone.now())


# --- what a push carries ----------------------------------------------------------------------

# What an app above adds to the push of a notification of its own (by the source's kind, the
# part before ":"): extra fields of the JSON the service worker reads. Approvals adds its
# Approve and Reject actions (approvals/push_decision.py). Notifications sit below those apps,
# so they register here (in their AppConfig.ready) instead of being imported.
PayloadExtra = Callable[[Notification, PushDelivery | None], dict[str, Any]]
_PAYLOAD_EXTRAS: dict[str, PayloadExtra] = {}


def register_payload_extra(kind: str, extra: PayloadExtra) -> None:
    """Let ``extra`` add fields to the push of every notification whose source is ``kind:…``:
    called as each delivery is sent, outside any transaction; it cannot replace the usual ones."""
    _PAYLOAD_EXTRAS[kind] = extra


def _payload(notification: Notification, delivery: PushDelivery | None = None) -> str:
    # A system notification shows no formatting.
    body = clip(markdown_to_text(notification.body), PAYLOAD_BODY)
    payload: dict[str, Any] = {
        "id": notification.pk,
        "title": notification.title,
        "body": body,
        "kind": notification.kind,
        "url": notification.opens() or "/notifications/",
    }
    return json.dumps(_extra(notification, delivery) | payload, ensure_ascii=False)


def _extra(notification: Notification, delivery: PushDelivery | None) -> dict[str, Any]:
    """The registered extra fields; none when the extra fails (the notification still goes
    out, plain: it tells the owner, and the page it opens can do the rest)."""
    extra = _PAYLOAD_EXTRAS.get(notification.source.partition(":")[0])
    if extra is None:
        return {}
    try:
        return extra(notification, delivery)
    except Exception:
        log.exception("The push of notification %s goes without its extras", notification.pk)
        return {}


def _record(delivery: PushDelivery, now: dt.datetime, **fields: object) -> None:
    record(PushDelivery, delivery.pk, now, **fields)


def push_delivery_send(*, delivery_id: int, now: dt.datetime | None = None) -> str | None:
    """Send one delivery if it is due, and record what the push service said.

    Returns the delivery's new status, or None when there was nothing to do (already claimed,
    sent, or not yet due).
    """
    now = now or timezone.now()
    claimed = hold_or_claim(PushDelivery, delivery_id, now)
    if claimed != Status.SENDING:
        return claimed
    delivery = PushDelivery.objects.select_related("notification", "subscription").get(
        pk=delivery_id
    )
    if not delivery.subscription.active:
        _record(delivery, now, status=Status.GONE, error="The subscription was deactivated.")
        return Status.GONE
    try:
        # Resolved and checked here, and the request sent to that address (push_endpoints.py).
        target = endpoint_target(delivery.subscription.endpoint)
    except EndpointRefused as exc:
        _record(delivery, now, status=Status.FAILED, error=f"Not sent: {exc}"[:500])
        return Status.FAILED
    except OSError as exc:  # the name does not resolve (now): a network error, tried again
        return _settle(delivery, now, None, f"could not resolve the push service: {exc}"[:500])
    try:
        status_code, error = _post(delivery, target)
    except Exception as exc:  # a bad key, a bad subscription: record it, never lose it
        log.exception("Web Push delivery %s failed", delivery_id)
        _record(delivery, now, status=Status.FAILED, error=f"{exc.__class__.__name__}: {exc}"[:500])
        return Status.FAILED
    return _settle(delivery, now, status_code, error)


def _post(delivery: PushDelivery, target: Target) -> tuple[int | None, str]:
    """POST the encrypted notification to the push service: its status code, and what went
    wrong ("" when it took it). Raises on anything but the push service's or the network's
    failure."""
    # Imported here, not with the module: pywebpush brings aiohttp, about 0.2 s of every web,
    # worker and beat start, and only a push being sent needs it.
    from pywebpush import WebPushException, webpush

    subscription = delivery.subscription
    # Outside any transaction: the push service may be slow, and nothing here holds a lock.
    try:
        with push_session(target) as session:
            response = webpush(
                subscription_info={
                    "endpoint": subscription.endpoint,
                    "keys": {"p256dh": subscription.p256dh, "auth": subscription.auth},
                },
                data=_payload(delivery.notification, delivery),
                vapid_private_key=vapid(),
                vapid_claims={"sub": settings.TALORYS_VAPID_SUBJECT},
                ttl=PUSH_TTL,
                timeout=SEND_TIMEOUT,
                requests_session=session,
            )
    except WebPushException as exc:
        failed = exc.response
        status_code = getattr(failed, "status_code", None)
        body = (getattr(failed, "text", "") or "")[:300]
        error = f"push service answered {status_code}: {body}".strip() if status_code else str(exc)
        return status_code, error
    except requests.RequestException as exc:
        return None, f"could not reach the push service: {exc.__class__.__name__}: {exc}"[:500]
    return response.status_code, ""


def _settle(delivery: PushDelivery, now: dt.datetime, status_code: int | None, error: str) -> str:
    """Record a sent delivery, a gone subscription, a retry or a failure; the new status."""
    subscription = delivery.subscription
    if status_code in (404, 410):
        with transaction.atomic():
            _record(delivery, now, status=Status.GONE, status_code=status_code, error=error)
            PushSubscription.objects.filter(pk=subscription.pk).update(
                active=False, deactivated_at=now
            )
            PushDelivery.objects.filter(
                subscription=subscription, status__in=[Status.PENDING, Status.HELD]
            ).update(status=Status.GONE, error="The subscription is gone.", updated_at=now)
        return Status.GONE
    retryable = status_code is None or status_code in RETRYABLE
    status = settle(delivery, now, error=error, retryable=retryable, status_code=status_code)
    if status == Status.SENT:
        PushSubscription.objects.filter(pk=subscription.pk).update(last_success_at=now)
    return status


def push_deliveries_flush(*, now: dt.datetime | None = None) -> list[int]:
    """Deliveries to (re)send now, by outbox.due (which also prunes old finished ones)."""
    return outbox.due(PushDelivery, now or timezone.now())
