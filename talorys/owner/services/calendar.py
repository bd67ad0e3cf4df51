"""The calendar feed's secret: the capability in its URL (/calendar/<secret>.ics).

Whoever holds the URL reads the feed without a session, as a phone's calendar must. So the secret
is shown to the owner's session only (never to an API token, never in a backup), compared in
constant time, and rotated to end an old URL at once. The feed itself is built by
automations/calendar.py, which reads tasks and schedules from the layers below it.
"""

from __future__ import annotations

import hmac

from talorys.owner.models import OwnerSettings, new_calendar_secret, new_settings_version
from talorys.owner.selectors import owner_settings_get


def calendar_path(secret: str) -> str:
    """The feed's path for ``secret`` (mounted by automations/urls.py)."""
    return f"/calendar/{secret}.ics"


def calendar_secret_matches(given: str) -> bool:
    """Whether ``given`` is the current secret: compared in constant time, so a wrong guess
    learns nothing from how long the answer took."""
    current = owner_settings_get().calendar_secret
    return bool(current) and hmac.compare_digest(given.encode(), current.encode())


def calendar_secret_rotate() -> str:
    """A new secret, saved: the old URL is refused from the next request on."""
    row = owner_settings_get()
    secret = new_calendar_secret()
    OwnerSettings.objects.filter(pk=row.pk).update(
        calendar_secret=secret, version=new_settings_version()
    )
    return secret
