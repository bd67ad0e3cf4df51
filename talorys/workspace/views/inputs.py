"""What the workspace pages read from a form in the owner's zone (ids and page numbers:
``talorys.lib.pages``)."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

from django.http import HttpRequest

from talorys.lib.pages import form_text
from talorys.lib.validation import local_datetime


def owner_zone_of(request: HttpRequest) -> ZoneInfo:
    """The owner's zone, kept on the request for every signed-in page (workspace middleware)."""
    return ZoneInfo(request.owner_settings.time_zone)  # type: ignore[attr-defined]


def form_when(request: HttpRequest, name: str, *, label: str) -> dt.datetime | None:
    """A ``datetime-local`` field, a wall-clock time in the owner's zone."""
    return local_datetime(form_text(request, name), owner_zone_of(request), field=label)
