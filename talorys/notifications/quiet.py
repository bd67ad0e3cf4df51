"""Quiet hours (owner settings, wall-clock times in the owner's zone): they hold what would reach
the owner's devices, Web Push and channels alike, never the notification itself."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

from talorys.owner.selectors import owner_settings_get


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
