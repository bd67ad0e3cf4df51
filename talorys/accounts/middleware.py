"""Session idle timeout and absolute lifetime, and sessions of accounts that are not the owner."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.contrib.auth import logout
from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse
from django.utils import timezone

from talorys.accounts.owner import is_the_owner
from talorys.lib.errors import database_unavailable
from talorys.web.middleware import unavailable_response

LOGIN_AT = "_talorys_login_at"
SEEN_AT = "_talorys_seen_at"
# Writing the session on every request would cost a DB write per request; a minute of slack in
# the idle clock is invisible against a timeout of days.
SEEN_RESOLUTION_SECONDS = 60


def session_expired(session, *, now: float) -> bool:
    """True when a session has been idle too long or has outlived its absolute lifetime.

    Shared by the HTTP middleware below and anything else that reads sessions (the WebSocket).
    """
    login_at = session.get(LOGIN_AT)
    if login_at is None:
        return False
    seen_at = session.get(SEEN_AT) or login_at
    return (
        now - login_at > settings.SESSION_ABSOLUTE_LIFETIME
        or now - seen_at > settings.SESSION_IDLE_TIMEOUT
    )


class SessionLifetimeMiddleware:
    """Ends a session after SESSION_IDLE_TIMEOUT without requests or SESSION_ABSOLUTE_LIFETIME.

    Any authenticated request counts as activity, so a session in use lives on, but never past
    its absolute lifetime, counted from login. A session of any account but the owner's ends at
    once (owner.is_the_owner): pages, the API and the admin then see nobody.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            # The first database read of most requests: a pool that stays empty surfaces here,
            # outside any view, where Django would answer a plain 500.
            authenticated = hasattr(request, "session") and request.user.is_authenticated
        except DatabaseError as error:
            busy = database_unavailable(error)
            if busy is None:
                raise
            return unavailable_response(request, busy)
        if authenticated:
            now = timezone.now().timestamp()
            session = request.session
            if not is_the_owner(request.user):
                logout(request)
            elif session.get(LOGIN_AT) is None:
                # Logged in some other way (the admin's login form): the clocks start now.
                session[LOGIN_AT] = session[SEEN_AT] = now
            elif session_expired(session, now=now):
                logout(request)  # deletes the session row and clears the cookie
            elif now - session.get(SEEN_AT, 0) > SEEN_RESOLUTION_SECONDS:
                session[SEEN_AT] = now
        return self.get_response(request)
