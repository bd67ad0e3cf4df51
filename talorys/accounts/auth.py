"""Who a request or a socket is: the owner's session (CSRF-checked) or an API token, and its scope.

Routes built with ``owner_session_auth`` take the session only: purging the bin, reverting the
model's changes, deciding approvals, the password, tokens, provider settings and channels, since
a leaked token must not do them. One route takes neither: deciding from a Web Push takes the
single-use capability that push carried (approvals/push_decision.py). /v1 and /mcp take a token
only (agent/completions/, the MCP server's access module).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from django.conf import settings
from django.contrib.auth import (
    BACKEND_SESSION_KEY,
    HASH_SESSION_KEY,
    SESSION_KEY,
    get_user_model,
    load_backend,
)
from django.contrib.auth.models import AbstractBaseUser, User
from django.contrib.sessions.backends.base import SessionBase
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.http.multipartparser import MultiPartParserError
from django.utils import timezone
from django.utils.crypto import constant_time_compare
from ninja.utils import check_csrf

from talorys.accounts.middleware import session_expired
from talorys.accounts.models import ApiToken
from talorys.accounts.owner import is_the_owner
from talorys.accounts.services import _session_store_class, api_token_authenticate, bearer_secret
from talorys.lib.actors import OWNER, Actor
from talorys.lib.errors import (
    AppError,
    BadRequest,
    Forbidden,
    Unauthorized,
)

_SAFE_METHODS = {"GET", "HEAD", "OPTIONS", "TRACE"}
NOT_AUTHENTICATED = "Log in, or send a valid API token."
# The request attribute that holds the API token a request came with (HttpRequest has no field
# for it, so it is set and read by name).
_API_TOKEN = "api_token"


class OwnerAuth:
    """django-ninja auth: a logged-in session (CSRF checked on unsafe methods) or a Bearer token.

    Tokens are accepted by the API only; pages and the WebSocket use the session. A ``read``
    token may only use safe methods (403 otherwise), a ``write`` token any. With tokens=False
    only a session will do: a leaked script token must not be able to change the password, mint
    more tokens or delete for good.
    """

    # Read by django-ninja's docs page: Swagger UI then sends X-CSRFToken with "Try it out".
    csrf = True

    def __init__(self, *, tokens: bool = True) -> None:
        self.tokens = tokens

    def __call__(self, request: HttpRequest) -> User | None:
        raw = bearer_secret(request.headers.get("Authorization"))
        if raw is not None:
            if not self.tokens:
                return None
            token = api_token_authenticate(raw=raw)
            if token is None:
                return None
            if token.scope != ApiToken.Scope.WRITE and request.method not in _SAFE_METHODS:
                raise Forbidden(
                    "This API token may only read. Make a token with scope 'write' to change things."
                )
            # Read by edges that refuse some changes to tokens (request_by_token, request_actor).
            setattr(request, _API_TOKEN, token)
            return token.user
        user = getattr(request, "user", None)
        if user is None or not user.is_authenticated:
            return None
        # ninja marks its views csrf_exempt for Django's middleware, so the check happens here.
        if request.method not in _SAFE_METHODS and _csrf_failed(request):
            raise Forbidden(
                "CSRF check failed: send the csrftoken cookie's value in the X-CSRFToken header."
            )
        return user


def _csrf_failed(request: HttpRequest) -> bool:
    try:
        return check_csrf(request) is not None
    except MultiPartParserError as exc:
        # The check reads request.POST for a form token; a malformed multipart body is bad input.
        raise BadRequest("The multipart/form-data body could not be read.") from exc


def request_by_token(request: HttpRequest) -> bool:
    """Whether the owner authenticated this request with an API token rather than the session."""
    return getattr(request, _API_TOKEN, None) is not None


owner_auth = OwnerAuth()
owner_session_auth = OwnerAuth(tokens=False)


def api_login_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """For the API's own non-operation views (OpenAPI schema, docs): the owner or a 401 envelope."""

    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        try:
            user = owner_auth(request)
        except AppError as exc:  # a CSRF failure: these views sit outside ninja's handlers
            return JsonResponse(exc.envelope(), status=exc.status)
        if user is None:
            missing = Unauthorized(NOT_AUTHENTICATED)
            return JsonResponse(missing.envelope(), status=missing.status)
        return view(request, *args, **kwargs)

    return wrapper


# Close code for "log in first" on a WebSocket (4000-4999 are the application's).
WEBSOCKET_UNAUTHENTICATED = 4401
WEBSOCKET_SESSION_ENDED = "Your session has ended. Log in again."


def _session_user(session: SessionBase) -> AbstractBaseUser | None:
    """The active user a stored session is logged in as, if the session still verifies.

    The check of django.contrib.auth.get_user (the session's hash must match the user's current
    password, or a SECRET_KEY fallback), without its writes: on a fallback match Django rotates
    the session key, which from a socket would log the browser out instead of re-signing it.
    """
    try:
        user_id = get_user_model()._meta.pk.to_python(session[SESSION_KEY])
        backend_path = session[BACKEND_SESSION_KEY]
    except KeyError:
        return None
    if backend_path not in settings.AUTHENTICATION_BACKENDS:
        return None
    user = load_backend(backend_path).get_user(user_id)  # None when missing or inactive
    stored_hash = session.get(HASH_SESSION_KEY) or ""
    if user is None or not stored_hash:
        return None
    hashes = [user.get_session_auth_hash(), *user.get_session_auth_fallback_hash()]
    return user if any(constant_time_compare(stored_hash, h) for h in hashes) else None


def websocket_owner_ok(scope: Mapping[str, Any]) -> bool:
    """Whether a WebSocket still belongs to a live owner session.

    Consumers ask at connect and again before acting on each frame or event: a socket lives for
    hours, and meanwhile its session may have ended (logout, owner_sessions_end), gone idle or
    past its lifetime (what SessionLifetimeMiddleware checks over HTTP), or been made with a
    password that has since changed. The scope's session is the copy read at connect, so the
    store is read afresh each time: two small queries. Nothing is written: activity on a socket
    does not keep a session alive, and a write here could overwrite what a concurrent request
    saved. A password change rotates the changing session's key too (owner_password_change), so
    that session's sockets end as well; the page reconnects with its new cookie.

    Reads the database: consumers call it through ``database_sync_to_async``.
    """
    user = scope.get("user")
    session = scope.get("session")
    if user is None or not user.is_authenticated or session is None:
        return False
    stored = _session_store_class()(session_key=session.session_key)
    if session_expired(stored, now=timezone.now().timestamp()):
        return False
    current = _session_user(stored)
    return current is not None and current.pk == user.pk and is_the_owner(current)


def request_actor(request: HttpRequest) -> Actor:
    """Who acts for an API request: the owner's session, or the token (named by its prefix)."""
    token = getattr(request, _API_TOKEN, None)
    if token is not None:
        return Actor(source=f"token:{token.prefix}")
    return OWNER


def request_owner(request: HttpRequest) -> User:
    """The user django-ninja's auth found for this request (``request.auth``)."""
    user = getattr(request, "auth", None)
    if not isinstance(user, User):
        raise Unauthorized(NOT_AUTHENTICATED)
    return user
