"""Web Push: the VAPID key, the browsers' subscriptions, and delivery with every outcome kept.

A notification makes one PushDelivery per active subscription (talorys/notifications/services.py). A delivery is
claimed with a conditional UPDATE before it is sent, so the task enqueued on commit and the
flush task that re-sends what was held or lost can never both send it. The push service is
called outside any transaction, at the address push_endpoints.py resolved and checked (a
public one, unless the operator allowed the host). What it answers is recorded on the delivery:
sent; gone (404 or 410: the browser dropped the subscription, which is deactivated); retried
later (429, 5xx, network errors, a name that does not resolve) up to MAX_ATTEMPTS; failed
(anything else, an endpoint that is not a public push service, or out of attempts).

Quiet hours (owner settings, in the owner's time zone) hold pushes, not notifications: a
delivery made or due during them waits, status ``held``, until they end.
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
from zoneinfo import ZoneInfo

import requests
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from django.conf import settings
from django.db import transaction
from django.db.models import F, Q, QuerySet
from django.utils import timezone
from py_vapid import Vapid
from py_vapid.utils import b64urlencode

from talorys.lib.errors import NotFound, ValidationFailed
from talorys.notifications.models import Notification, PushDelivery, PushSubscription
from talorys.notifications.push_endpoints import (
    EndpointRefused,
    Target,
    endpoint_check,
    endpoint_target,
    push_session,
)
from talorys.owner.services.settings import owner_settings_get

log = logging.getLogger(__name__)

VAPID_KEY_FILE = "vapid_private_key.pem"
MAX_ATTEMPTS = 5
RETRY_BASE = dt.timedelta(minutes=1)
SEND_TIMEOUT = 10  # seconds
PUSH_TTL = 24 * 3600  # how long the push service keeps it for an offline browser
STUCK_AFTER = dt.timedelta(minutes=5)  # a "sending" this old lost its worker
PENDING_GRACE = dt.timedelta(seconds=30)  # let the task enqueued on commit go first
RETENTION = dt.timedelta(days=30)
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


# --- quiet hours -------------------------------------------------------------------------------


def quiet_hours_until(*, now: dt.datetime) -> dt.datetime | None:
    """When the quiet hours that contain ``now`` end (UTC), or None outside quiet hours.

    Start and end are local wall-clock times; start after end spans midnight (22:00-07:00).
    """
    owner = owner_settings_get()
    start, end = owner.quiet_hours_start, owner.quiet_hours_end
    if start is None or end is None or start == end:
        return None
    zone = ZoneInfo(owner.time_zone)
    local = now.astimezone(zone)
    time = local.time()
    inside = start <= time < end if start < end else (time >= start or time < end)
    if not inside:
        return None
    day = local.date() if time < end else local.date() + dt.timedelta(days=1)
    # fold=0: an end inside a DST gap is read shifted by the gap, as schedules are.
    until = dt.datetime.combine(day, end).replace(tzinfo=zone, fold=0).astimezone(dt.UTC)
    return until if until > now else None


# --- deliveries --------------------------------------------------------------------------------


def push_deliveries_create(
    *, notifications: Sequence[Notification], now: dt.datetime | None = None
) -> list[int]:
    """One delivery per notification and active subscription, in one INSERT. Returns the ids to
    send now (none in quiet hours)."""
    now = now or timezone.now()
    subscriptions = list(PushSubscription.objects.filter(active=True))
    if not subscriptions or not notifications:  # nothing to push: no need to read quiet hours
        return []
    hold = quiet_hours_until(now=now)
    deliveries = PushDelivery.objects.bulk_create(
        [
            PushDelivery(
                notification=notification,
                subscription=subscription,
                status=Status.HELD if hold else Status.PENDING,
                not_before=hold or now,
            )
            for notification in notifications
            for subscription in subscriptions
        ]
    )
    return [] if hold else [d.pk for d in deliveries]


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
    body = notification.body
    if len(body) > PAYLOAD_BODY:
        body = body[: PAYLOAD_BODY - 1] + "…"
    payload: dict[str, Any] = {
        "id": notification.pk,
        "title": notification.title,
        "body": body,
        "kind": notification.kind,
        "url": _opens(notification),
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


def _opens(notification: Notification) -> str:
    """The page a click on the push opens: the conversation a "reply is ready" notice is about
    (agent/live/ready.py, source ``conversation:<id>``), the approval one waits for (its card
    on the Approvals page, source ``approval:<id>``), else the notifications."""
    kind, _, key = notification.source.partition(":")
    if not key.isdigit():
        return "/notifications/"
    if kind == "conversation":
        return f"/c/{key}/"
    if kind == "approval":
        return f"/approvals/#approval-{key}"
    return "/notifications/"


def _record(delivery: PushDelivery, now: dt.datetime, **fields: object) -> None:
    PushDelivery.objects.filter(pk=delivery.pk, status=Status.SENDING).update(
        updated_at=now, **fields
    )


def push_delivery_send(*, delivery_id: int, now: dt.datetime | None = None) -> str | None:
    """Send one delivery if it is due, and record what the push service said.

    Returns the delivery's new status, or None when there was nothing to do (already claimed,
    sent, or not yet due).
    """
    now = now or timezone.now()
    hold = quiet_hours_until(now=now)
    if hold is not None:
        PushDelivery.objects.filter(
            pk=delivery_id, status__in=[Status.PENDING, Status.HELD]
        ).update(status=Status.HELD, not_before=hold, updated_at=now)
        return Status.HELD
    # The claim: of every task that tries to send this delivery, one finds it still waiting.
    claimed = PushDelivery.objects.filter(
        pk=delivery_id, status__in=[Status.PENDING, Status.HELD], not_before__lte=now
    ).update(status=Status.SENDING, attempts=F("attempts") + 1, updated_at=now)
    if not claimed:
        return None
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
    if not error:
        _record(delivery, now, status=Status.SENT, status_code=status_code, sent_at=now, error="")
        PushSubscription.objects.filter(pk=subscription.pk).update(last_success_at=now)
        return Status.SENT
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
    if retryable and delivery.attempts < MAX_ATTEMPTS:
        retry_at = now + RETRY_BASE * 2 ** (delivery.attempts - 1)
        _record(
            delivery,
            now,
            status=Status.PENDING,
            status_code=status_code,
            error=error,
            not_before=retry_at,
        )
        return Status.PENDING
    _record(delivery, now, status=Status.FAILED, status_code=status_code, error=error)
    return Status.FAILED


def push_deliveries_flush(*, now: dt.datetime | None = None) -> list[int]:
    """Deliveries to (re)send now: held past quiet hours, retries that are due, and pending ones
    whose task never came (a lost message, a dead worker). Also prunes old finished ones."""
    now = now or timezone.now()
    stuck = PushDelivery.objects.filter(status=Status.SENDING, updated_at__lt=now - STUCK_AFTER)
    stuck.filter(attempts__gte=MAX_ATTEMPTS).update(
        status=Status.FAILED, error="The worker stopped while sending.", updated_at=now
    )
    stuck.update(status=Status.PENDING, not_before=now, updated_at=now)
    PushDelivery.objects.filter(
        status__in=[Status.SENT, Status.FAILED, Status.GONE], created_at__lt=now - RETENTION
    ).delete()
    if quiet_hours_until(now=now) is not None:
        return []
    due = PushDelivery.objects.filter(
        Q(status=Status.HELD, not_before__lte=now)
        | Q(status=Status.PENDING, not_before__lte=now - PENDING_GRACE)
    )
    return list(due.order_by("not_before").values_list("pk", flat=True)[:1000])
