"""The one way a time is shown to the owner: "1 Dec 2026, 22:14", in the owner's zone.

Pages use it through the ``when`` filter (talorys/templatetags/talorys_tags.py), the admin
through settings' formats (talorys/formats/en/formats.py) and the scripts through
static/talorys/js/time.js, which formats the same way; a test keeps the three equal. Lists that
want a relative time ("5 min ago", "yesterday 22:14") get it with the full time in the title.
The zone is the active one: the owner's on every page (owner.middleware).
"""

from __future__ import annotations

import datetime as dt

from django.utils import timezone

MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
# Django's format strings for the same style (settings and the admin).
DATE_FORMAT = "j M Y"
TIME_FORMAT = "H:i"
DATETIME_FORMAT = "j M Y, H:i"


def local(value: dt.datetime) -> dt.datetime:
    """An aware time in the active zone (the owner's on a page); a naive one as it is."""
    return timezone.localtime(value) if timezone.is_aware(value) else value


def format_date(value: dt.date) -> str:
    """ "1 Dec 2026"; a datetime by its local date."""
    if isinstance(value, dt.datetime):
        value = local(value).date()
    return f"{value.day} {MONTHS[value.month - 1]} {value.year}"


def format_clock(value: dt.datetime) -> str:
    return f"{value:%H:%M}"


def format_datetime(value: dt.datetime) -> str:
    """ "1 Dec 2026, 22:14" in the active zone."""
    value = local(value)
    return f"{format_date(value)}, {format_clock(value)}"


def format_relative(value: dt.datetime, *, now: dt.datetime | None = None) -> str:
    """For lists: "just now", "5 min ago", "in 5 min", "today 22:14", "yesterday 22:14",
    "tomorrow 09:00", else the full time. Days are the active zone's."""
    now = now or timezone.now()
    seconds = (value - now).total_seconds()
    if abs(seconds) < 60:
        return "just now"
    if abs(seconds) < 3600:
        minutes = int(abs(seconds) // 60)
        return f"in {minutes} min" if seconds > 0 else f"{minutes} min ago"
    value = local(value)
    days = (value.date() - local(now).date()).days
    words = {0: "today", -1: "yesterday", 1: "tomorrow"}
    if days in words:
        return f"{words[days]} {format_clock(value)}"
    return format_datetime(value)


def iso(value: dt.date) -> str:
    """The machine-readable form for <time datetime>: local ISO 8601 with its offset."""
    if isinstance(value, dt.datetime):
        return local(value).isoformat(timespec="seconds")
    return value.isoformat()
