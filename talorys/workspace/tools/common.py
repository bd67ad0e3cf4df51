"""What the workspace's tools share: how times, excerpts and limits read to the model.

Times go out in the owner's time zone with the offset written out, so the model reads the same
clock it is told to write ``due_at`` in.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated
from zoneinfo import ZoneInfo

from django.utils import timezone
from pydantic import Field

from talorys.lib import validation

EXCERPT = 160

DUE_AT_HELP = (
    "ISO 8601 date-time WITH a UTC offset, e.g. 2026-03-14T09:00:00+01:00. Use the owner's "
    "local offset from the system prompt; a time without an offset is refused."
)
# The weekday rule of talorys/lib/when.py, so a model reads "next friday" as the tasks page does.
WEEKDAY_RULE = (
    " A weekday the owner names ('friday', 'next friday') is the first such day after today "
    "('this friday' is today when today is Friday); a day without a time is at 09:00."
)


def local_iso(value: dt.datetime | None, zone: ZoneInfo) -> str | None:
    if value is None:
        return None
    try:
        return timezone.localtime(value, zone).isoformat(timespec="minutes")
    except OverflowError:  # a date stored before dates were bounded, at the end of time
        return value.isoformat(timespec="minutes")


def clip(text: str, width: int = EXCERPT) -> str:
    return validation.clip(" ".join(text.split()), width)


# The version the model read (each item it is shown carries one): an edit from an older read is
# refused, so the model reads again instead of undoing what the owner changed meanwhile.
ReadVersion = Annotated[
    int | None,
    Field(
        ge=1,
        le=2**31 - 1,
        description=(
            "The item's version as you last read it. If it has changed since (the owner edited "
            "it), the edit is refused: read it again and redo the change."
        ),
    ),
]
