"""Input and output schemas of the notifications API."""

from __future__ import annotations

import datetime as dt
from typing import Annotated

from ninja import Schema
from pydantic import Field

from talorys.lib.markdown import render_markdown
from talorys.notifications.channels import masked, service_name
from talorys.notifications.models import Channel, Notification
from talorys.web.schemas import In, one_of


class NotificationFilters(Schema):
    unread: bool | None = None


class NotificationOut(Schema):
    id: int
    title: str
    body: str
    body_html: str = Field(
        description="The body (Markdown) rendered as sanitised HTML (talorys/lib/markdown.py)."
    )
    kind: str
    source: str
    created_at: dt.datetime
    read_at: dt.datetime | None

    @staticmethod
    def resolve_body_html(notification: Notification) -> str:
        return render_markdown(notification.body)


class ChannelDeliveryOut(Schema):
    """How a notification went to one channel (its receipt)."""

    channel_id: int
    channel: str = Field(alias="channel.name")
    status: str
    attempts: int
    error: str
    sent_at: dt.datetime | None


class NotificationWithDeliveriesOut(NotificationOut):
    channels: list[ChannelDeliveryOut] = Field(alias="channel_deliveries.all")


# A kind as the model names them, read from its choices (never retyped here).
_KIND = Annotated[Notification.Kind, one_of(Notification.Kind)]
_KINDS_MAX = len(Notification.Kind.values)


class ChannelIn(In):
    name: str = Field(min_length=1, max_length=Channel.NAME_MAX)
    url: str = Field(
        min_length=1,
        max_length=Channel.URL_MAX,
        description="An Apprise URL (ntfys://ntfy.sh/topic, tgram://token/chat, mailtos://...). "
        "Write-only: never returned.",
    )
    kinds: list[_KIND] | None = Field(
        None, max_length=_KINDS_MAX, description="The kinds it gets; left out: every kind."
    )
    enabled: bool = True


class ChannelPatch(In):
    name: str | None = Field(None, min_length=1, max_length=Channel.NAME_MAX)
    url: str | None = Field(
        None, min_length=1, max_length=Channel.URL_MAX, description="Left out: unchanged."
    )
    kinds: list[_KIND] | None = Field(None, max_length=_KINDS_MAX)
    enabled: bool | None = None


class ChannelOut(Schema):
    id: int
    name: str
    service: str = Field(description="Which service the URL speaks to (ntfy, Telegram, ...).")
    masked_url: str = Field(description="The URL with its secrets hidden.")
    kinds: list[str]
    enabled: bool
    created_at: dt.datetime
    updated_at: dt.datetime
    last_success_at: dt.datetime | None
    last_failure_at: dt.datetime | None
    last_error: str

    @staticmethod
    def resolve_service(channel: Channel) -> str:
        return service_name(channel.url)

    @staticmethod
    def resolve_masked_url(channel: Channel) -> str:
        return masked(channel.url)


class ChannelKindOut(Schema):
    kind: str
    label: str = Field(description="What the settings page calls it.")


class ChannelTestOut(Schema):
    sent: bool
    error: str = Field(description="Why it did not arrive; empty when it did.")
