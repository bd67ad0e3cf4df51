"""/api/notifications (list, mark read), /api/push (the VAPID key and the browsers'
subscriptions) and /api/channels (where else notifications go: ntfy, Telegram, email, ...)."""

import datetime as dt

from django.db.models import QuerySet
from django.http import HttpRequest
from ninja import Query, Router, Schema, Status
from ninja.pagination import paginate
from pydantic import ConfigDict, Field

from talorys.accounts.auth import owner_session_auth
from talorys.notifications import channels, push, selectors, services
from talorys.notifications.models import Channel, Notification, PushSubscription
from talorys.notifications.schemas import (
    ChannelIn,
    ChannelKindOut,
    ChannelOut,
    ChannelPatch,
    ChannelTestOut,
    NotificationFilters,
    NotificationOut,
    NotificationWithDeliveriesOut,
)
from talorys.web.pagination import Pagination
from talorys.web.schemas import In

notifications_router = Router(tags=["notifications"])


# --- notifications -----------------------------------------------------------------------------


@notifications_router.get("", response=list[NotificationWithDeliveriesOut])
@paginate(Pagination)
def notification_list(
    request: HttpRequest, filters: Query[NotificationFilters]
) -> QuerySet[Notification]:
    return selectors.notification_list(unread=filters.unread)


class MarkedReadOut(Schema):
    marked: int = Field(description="How many were unread.")


@notifications_router.post("/read-all", response=MarkedReadOut)
def notification_mark_all_read(request: HttpRequest) -> dict:
    return {"marked": services.notification_mark_all_read()}


@notifications_router.post("/{int:notification_id}/read", response=NotificationOut)
def notification_mark_read(request: HttpRequest, notification_id: int) -> Notification:
    return services.notification_mark_read(notification_id=notification_id)


push_router = Router(tags=["push"])


class PushKeyOut(Schema):
    public_key: str = Field(description="The applicationServerKey for pushManager.subscribe().")


class PushKeysIn(In):
    p256dh: str = Field(min_length=1, max_length=PushSubscription.P256DH_MAX)
    auth: str = Field(min_length=1, max_length=PushSubscription.AUTH_MAX)


class PushSubscriptionIn(In):
    """What ``PushSubscription.toJSON()`` gives, as the browser sends it."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True, populate_by_name=True)

    endpoint: str = Field(min_length=1, max_length=PushSubscription.ENDPOINT_MAX)
    keys: PushKeysIn
    expiration_time: int | None = Field(None, alias="expirationTime")
    user_agent: str = Field("", max_length=PushSubscription.USER_AGENT_MAX)


class PushSubscriptionOut(Schema):
    id: int
    endpoint: str
    user_agent: str
    active: bool
    created_at: dt.datetime
    last_success_at: dt.datetime | None
    deactivated_at: dt.datetime | None


@push_router.get("/key", response=PushKeyOut)
def push_key(request: HttpRequest) -> dict:
    return {"public_key": push.vapid_public_key()}


# The subscriptions are the owner's session only, like provider settings: an endpoint is where
# the worker POSTs at every notification, and whether it answered (last_success_at) is news.
@push_router.get("/subscriptions", response=list[PushSubscriptionOut], auth=owner_session_auth)
@paginate(Pagination)
def push_subscription_list(request: HttpRequest) -> QuerySet[PushSubscription]:
    return push.push_subscription_list()


@push_router.post("/subscriptions", response={201: PushSubscriptionOut}, auth=owner_session_auth)
def push_subscription_create(request: HttpRequest, payload: PushSubscriptionIn) -> Status:
    subscription = push.push_subscription_create(
        endpoint=payload.endpoint,
        p256dh=payload.keys.p256dh,
        auth=payload.keys.auth,
        user_agent=payload.user_agent or request.headers.get("User-Agent", ""),
    )
    return Status(201, subscription)


@push_router.delete(
    "/subscriptions/{int:subscription_id}", response={204: None}, auth=owner_session_auth
)
def push_subscription_delete(request: HttpRequest, subscription_id: int) -> Status:
    push.push_subscription_delete(subscription_id=subscription_id)
    return Status(204, None)


# --- channels: the owner's session only (their URLs hold secrets) ------------------------------

channels_router = Router(tags=["channels"], auth=owner_session_auth)


@channels_router.get("", response=list[ChannelOut])
@paginate(Pagination)
def channel_list(request: HttpRequest) -> QuerySet[Channel]:
    return selectors.channel_list()


@channels_router.get("/kinds", response=list[ChannelKindOut])
def channel_kinds(request: HttpRequest) -> list[dict]:
    """The kinds of notification a channel may get, in the settings page's words and order."""
    return [{"kind": kind, "label": label} for kind, label in channels.KIND_LABELS.items()]


@channels_router.post("", response={201: ChannelOut})
def channel_create(request: HttpRequest, payload: ChannelIn) -> Status:
    return Status(201, channels.channel_create(**payload.model_dump()))


@channels_router.get("/{int:channel_id}", response=ChannelOut)
def channel_get(request: HttpRequest, channel_id: int) -> Channel:
    return selectors.channel_get(channel_id=channel_id)


@channels_router.patch("/{int:channel_id}", response=ChannelOut)
def channel_update(request: HttpRequest, channel_id: int, payload: ChannelPatch) -> Channel:
    return channels.channel_update(channel_id=channel_id, **payload.model_dump(exclude_unset=True))


@channels_router.delete("/{int:channel_id}", response={204: None})
def channel_delete(request: HttpRequest, channel_id: int) -> Status:
    channels.channel_delete(channel_id=channel_id)
    return Status(204, None)


@channels_router.post("/{int:channel_id}/test", response=ChannelTestOut)
async def channel_test(request: HttpRequest, channel_id: int) -> dict:
    """Send a test message now and say whether the service took it."""
    error = await channels.channel_test(channel_id=channel_id)
    return {"sent": not error, "error": error}
