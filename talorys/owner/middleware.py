"""The owner's time zone for every page: dates on the pages are shown in it, as in the chat.

It is the last middleware and synchronous only, so that under ASGI Django runs the whole chain
in the request's one worker thread instead of hopping to it for each async-capable middleware
after it.
"""

from __future__ import annotations

from collections.abc import Callable
from zoneinfo import ZoneInfo

from django.http import HttpRequest, HttpResponse
from django.utils import timezone

from talorys.owner.models import OwnerSettings


class OwnerTimeZoneMiddleware:
    """Activates the owner's zone for a signed-in page request and keeps the settings row on the
    request (``request.owner_settings``) for the header. The API answers in UTC ISO times and
    skips the read."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        user = getattr(request, "user", None)
        if user is None or not user.is_authenticated or request.path.startswith("/api/"):
            return self.get_response(request)
        # Read, never created here: a page view must not write (the row's defaults stand in
        # until the first settings change makes it).
        owner_settings = OwnerSettings.objects.filter(pk=1).first() or OwnerSettings(pk=1)
        request.owner_settings = owner_settings  # type: ignore[attr-defined]
        timezone.activate(ZoneInfo(owner_settings.time_zone))
        try:
            return self.get_response(request)
        finally:
            timezone.deactivate()
