"""The bin and the change log over the API."""

from __future__ import annotations

import datetime as dt
from typing import Any

from ninja import Schema


class BinItemOut(Schema):
    kind: str
    id: int
    title: str
    deleted_at: dt.datetime
    deleted_by: str


class ChangeOut(Schema):
    id: int
    kind: str
    object_id: int
    action: str
    title: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    source: str
    conversation_id: int | None
    message_id: int | None
    reverts_id: int | None
    reverted: bool = False
    created_at: dt.datetime


class BinEmptyOut(Schema):
    purged: int
