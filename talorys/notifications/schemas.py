"""Input and output schemas of the notifications API."""

from __future__ import annotations

import datetime as dt

from ninja import Schema


class NotificationFilters(Schema):
    unread: bool | None = None


class NotificationOut(Schema):
    id: int
    title: str
    body: str
    kind: str
    source: str
    created_at: dt.datetime
    read_at: dt.datetime | None
