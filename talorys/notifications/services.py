"""Telling the owner something: the notification, then live delivery, Web Push and the owner's
channels (ntfy, email, ... talorys/notifications/channel_send.py), on commit.

``notification_send`` is the one way code that *tells* the owner (automation runs, the
notify_owner tool) makes a notification. In one transaction it saves the notification, one
push delivery per subscribed browser and one receipt per channel that takes its kind; after
commit it shows the notification on open pages (Channels group ``owner-notifications``, see
talorys/notifications/consumers.py) and enqueues the sends. A rolled-back caller therefore
announces nothing, and a send whose task is lost is still a pending delivery that the flush
task sends later. A notification ``seen`` (the owner is looking at what it says, on the
page where they made it happen: a proposal in the chat they are following, approvals/telling.py)
is only recorded: saved already read, with no toast, no push and no channel receipt, as the
outcome is in front of them already. ``notifications_send`` does the same for many at once
(reminders due together): one INSERT for them, one for their deliveries, one broadcast.

Embedded mode (no REDIS_URL) has no channel layer shared between processes: a worker's
broadcast reaches nobody. There the web process watches the table itself (``watcher_join``,
one loop per process while any notifications socket is open) and sends rows made elsewhere to
its own sockets; rows this process made were already sent on commit and are not sent again.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import deque
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.layers import InMemoryChannelLayer, get_channel_layer
from django.db import transaction
from django.utils import timezone

from talorys.lib.errors import NotFound, field_refused
from talorys.lib.markdown import render_markdown
from talorys.lib.validation import clean_line, clean_text, clip, one_line
from talorys.notifications import push
from talorys.notifications.channel_send import channel_deliveries_create
from talorys.notifications.models import Notification
from talorys.notifications.tasks import deliver_push, deliver_to_channel
from talorys.web.live import PAGES_GROUP

log = logging.getLogger(__name__)

NOTIFICATIONS_GROUP = PAGES_GROUP  # every open page (talorys/web/live.py)
WATCH_INTERVAL = 1.0  # seconds between the embedded watcher's looks at the table
# Ids this process made (and sends on commit itself): the watcher skips them. Bounded; a
# notification the watcher sees is at most seconds old, far fewer than this many.
_made_here: deque[int] = deque(maxlen=1000)
_made_here_lock = threading.Lock()


def notification_payload(notification: Notification) -> dict[str, Any]:
    """The notification as open pages receive it (the fields of the API's NotificationOut)."""
    return {
        "id": notification.pk,
        "title": notification.title,
        "body": notification.body,
        "body_html": render_markdown(notification.body),
        "kind": notification.kind,
        "source": notification.source,
        "created_at": notification.created_at.isoformat(),
        "read_at": notification.read_at.isoformat() if notification.read_at else None,
    }


def notification_send(
    *,
    title: str,
    body: str = "",
    kind: str = Notification.Kind.INFO,
    source: str = "",
    seen: bool = False,
) -> Notification:
    """Create a notification; on commit, broadcast it to open pages and push it to browsers.
    ``seen``: only record it, read (the module's docstring says when)."""
    draft = Draft(title=title, body=body, kind=kind, source=source, seen=seen)
    (notification,) = notifications_send([draft])
    return notification


@dataclass(frozen=True)
class Draft:
    """A notification to make: what ``notification_send`` takes, for ``notifications_send``."""

    title: str
    body: str = ""
    kind: str = Notification.Kind.INFO
    source: str = ""
    by_tool: bool = False  # the notify_owner tool's (talorys/notifications/from_tools.py)
    seen: bool = False  # the owner sees it happen: recorded read, not announced (module doc)


def notifications_send(
    drafts: Sequence[Draft], *, skip_channels: Collection[int] = ()
) -> list[Notification]:
    """``notification_send`` for many at once (one broadcast: each opens a connection to the
    channel layer); a draft that fails its checks fails the lot. ``skip_channels``: channels
    that get no receipt for them (ids; full for the day, from_tools.py)."""
    now = timezone.now()
    unsaved = [_checked(d.title, d.body, d.kind, d.source, by_tool=d.by_tool) for d in drafts]
    for draft, notification in zip(drafts, unsaved, strict=True):
        notification.read_at = now if draft.seen else None
    with transaction.atomic():
        notifications = Notification.objects.bulk_create(unsaved)
        # Before the commit, so the watcher can never see the rows without knowing they are ours.
        with _made_here_lock:
            _made_here.extend(notification.pk for notification in notifications)
        told = [n for d, n in zip(drafts, notifications, strict=True) if not d.seen]
        if told:
            _announce(told, skip_channels)
    return notifications


def _announce(notifications: list[Notification], skip_channels: Collection[int]) -> None:
    """On commit: show the saved notifications on open pages, push them, send them to channels."""
    to_send = push.push_deliveries_create(notifications=notifications)
    # robust: a channel layer or broker outage is logged and must not fail the caller,
    # whose transaction has already committed by then.
    payloads = [notification_payload(notification) for notification in notifications]
    transaction.on_commit(partial(_broadcast, payloads, "notification.created"), robust=True)
    for delivery_id in to_send:
        transaction.on_commit(partial(deliver_push.delay, delivery_id), robust=True)
    receipts = channel_deliveries_create(notifications=notifications, skip=skip_channels)
    for delivery_id in receipts:
        transaction.on_commit(partial(deliver_to_channel.delay, delivery_id), robust=True)


def _broadcast(payloads: list[dict[str, Any]], event: str) -> None:
    """Send each payload to every open page, as ``event`` (``notification.created`` or
    ``notification.updated``, the consumer's handlers)."""
    layer = get_channel_layer()
    if layer is None:
        return

    async def send_all() -> None:
        for payload in payloads:
            await layer.group_send(NOTIFICATIONS_GROUP, {"type": event, "notification": payload})

    async_to_sync(send_all)()


# --- rewriting what a notification says --------------------------------------------------------


@dataclass(frozen=True)
class Rewrite:
    """The new text of the notification(s) whose source is ``source``."""

    title: str
    body: str = ""


def notification_update_by_source(*, source: str, title: str, body: str = "") -> list[Notification]:
    """Rewrite the notification made for ``source`` (``"approval:7"``) once what it announced
    has moved on, e.g. an approval that was decided: it says what happened instead of asking."""
    return notifications_update_by_source({source: Rewrite(title, body)})


def notifications_update_by_source(rewrites: Mapping[str, Rewrite]) -> list[Notification]:
    """``notification_update_by_source`` for many sources: one read and one UPDATE for them all.

    They are marked read too (what they announced needs nothing more from the owner). On commit,
    open pages receive each as ``notification.updated`` and put the new text in place of the old
    one (static/talorys/js/notifications.js). A push not sent yet (held for quiet hours) carries
    the new text, since a push reads its notification when it is sent; one already shown on a
    device stays as it was. A source with no notification (pruned) is skipped."""
    now = timezone.now()
    with transaction.atomic():
        notifications = list(
            Notification.objects.select_for_update().filter(source__in=list(rewrites))
        )
        for notification in notifications:
            rewrite = rewrites[notification.source]
            notification.title = clean_line(
                clip(rewrite.title.strip(), Notification.TITLE_MAX),
                field="title",
                max_length=Notification.TITLE_MAX,
            )
            notification.body = clip(rewrite.body.strip(), Notification.BODY_MAX)
            if notification.read_at is None:
                notification.read_at = now
        Notification.objects.bulk_update(notifications, ["title", "body", "read_at"])
        payloads = [notification_payload(notification) for notification in notifications]
        if payloads:
            transaction.on_commit(
                partial(_broadcast, payloads, "notification.updated"), robust=True
            )
    return notifications


# --- embedded mode: the web process watches for notifications made by other processes --------


# Ids are handed out in one order and committed in another: a row can appear after one with a
# higher id was already seen. The watcher looks this many ids below the newest it has seen again.
LOOK_BACK = 100


def _latest_id() -> int:
    return Notification.objects.order_by("-pk").values_list("pk", flat=True).first() or 0


def _ids_above(floor: int) -> set[int]:
    return set(Notification.objects.filter(pk__gt=floor).values_list("pk", flat=True)[:1000])


def _payloads(ids: list[int]) -> list[dict[str, Any]]:
    return [notification_payload(n) for n in Notification.objects.filter(pk__in=ids).order_by("pk")]


class _Watcher:
    """One per event loop (a process serves its sockets from one): polls while sockets are open."""

    def __init__(self) -> None:
        self.sockets = 0
        self.task: asyncio.Task[None] | None = None

    async def run(self, layer: Any, newest: int, known: set[int]) -> None:
        """``newest``: the highest id when the first page opened; ``known``: the ids near it
        that existed then (not news)."""
        while True:
            await asyncio.sleep(WATCH_INTERVAL)
            try:
                ids = await database_sync_to_async(_ids_above)(newest - LOOK_BACK)
                with _made_here_lock:  # sent on commit by this process already
                    fresh = sorted(ids - known - set(_made_here))
                known |= ids
                payloads = await database_sync_to_async(_payloads)(fresh) if fresh else []
            except Exception:  # the database is away for a moment: look again next time
                log.exception("Notification watcher could not read the table")
                continue
            newest = max([newest, *ids])
            known = {pk for pk in known if pk > newest - LOOK_BACK}
            for payload in payloads:
                try:
                    await layer.group_send(
                        NOTIFICATIONS_GROUP,
                        {"type": "notification.created", "notification": payload},
                    )
                except Exception:  # a full channel: that page misses one; the others do not
                    log.exception("Notification watcher could not send %s", payload["id"])


_watchers: dict[asyncio.AbstractEventLoop, _Watcher] = {}


def _embedded(layer: Any) -> bool:
    # With a shared layer (Redis) a worker's broadcast reaches open pages by itself.
    return isinstance(layer, InMemoryChannelLayer)


async def watcher_join(layer: Any) -> bool:
    """A notifications socket opened: start this process's watcher if it is the first. Returns
    whether the socket counts (embedded mode), to pass on to ``watcher_leave``."""
    if not _embedded(layer):
        return False
    loop = asyncio.get_running_loop()
    for other in [key for key in _watchers if key.is_closed()]:
        del _watchers[other]  # a loop that ended (tests run one per test)
    watcher = _watchers.setdefault(loop, _Watcher())
    watcher.sockets += 1
    if watcher.task is None or watcher.task.done():
        # Read before the socket is accepted: anything made after the page is open is sent.
        newest = await database_sync_to_async(_latest_id)()
        near = await database_sync_to_async(_ids_above)(newest - LOOK_BACK)
        known = {pk for pk in near if pk <= newest}  # one made since is news
        # Meanwhile another socket may have started it, or this one may have closed already.
        if watcher.sockets and (watcher.task is None or watcher.task.done()):
            watcher.task = loop.create_task(
                watcher.run(layer, newest, known), name="notification-watcher"
            )
    return True


async def watcher_leave() -> None:
    """A counted socket closed: stop the watcher when it was the last."""
    watcher = _watchers.get(asyncio.get_running_loop())
    if watcher is None:
        return
    watcher.sockets = max(0, watcher.sockets - 1)
    if watcher.sockets == 0 and watcher.task is not None:
        watcher.task.cancel()
        watcher.task = None


# --- notifications -----------------------------------------------------------------------------


def notification_create(
    *, title: str, body: str = "", kind: str = Notification.Kind.INFO, source: str = ""
) -> Notification:
    notification = _checked(title, body, kind, source)
    notification.save(force_insert=True)
    return notification


def _checked(
    title: str, body: str, kind: str, source: str, *, by_tool: bool = False
) -> Notification:
    """The notification to save, its text checked (ValidationFailed)."""
    if kind not in Notification.Kind.values:
        raise field_refused(
            f"kind must be one of {', '.join(Notification.Kind.values)}.", field="kind"
        )
    return Notification(
        title=clean_line(title, field="title", max_length=Notification.TITLE_MAX),
        body=clean_text(body, field="body", max_length=Notification.BODY_MAX, required=False),
        kind=kind,
        source=one_line(source)[:100],
        by_tool=by_tool,
    )


def notification_mark_read(*, notification_id: int) -> Notification:
    Notification.objects.filter(pk=notification_id, read_at__isnull=True).update(
        read_at=timezone.now()
    )
    notification = Notification.objects.filter(pk=notification_id).first()
    if notification is None:
        raise NotFound(f"Notification {notification_id} does not exist.")
    return notification


def notification_mark_all_read() -> int:
    """Mark every unread notification read; returns how many were unread."""
    return Notification.objects.filter(read_at__isnull=True).update(read_at=timezone.now())
