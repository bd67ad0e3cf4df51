"""Owner authentication: the API's auth (session + CSRF, or a personal token), login throttling,
and personal API tokens.
"""

from __future__ import annotations

import hashlib
import secrets

from django.conf import settings
from django.contrib.auth import authenticate, login
from django.contrib.auth.models import AbstractBaseUser
from django.core.cache import cache
from django.http import HttpRequest
from django.utils import timezone
from ninja.utils import check_csrf

from talorys.errors import Forbidden, NotFound, RateLimited, Unauthorized, ValidationFailed
from talorys.middleware import LOGIN_AT, SEEN_AT
from talorys.models import ApiToken

TOKEN_PREFIX = "tal_"
_SAFE_METHODS = {"GET", "HEAD", "OPTIONS", "TRACE"}


def _hash_token(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


class OwnerAuth:
    """django-ninja auth: a logged-in session (CSRF checked on unsafe methods) or a Bearer token.

    Tokens are accepted by the API only; pages and the WebSocket use the session.
    """

    def __call__(self, request: HttpRequest) -> AbstractBaseUser | None:
        header = request.headers.get("Authorization", "")
        if header.startswith("Bearer "):
            return api_token_authenticate(raw=header.removeprefix("Bearer ").strip())
        user = getattr(request, "user", None)
        if user is None or not user.is_authenticated:
            return None
        if request.method not in _SAFE_METHODS and check_csrf(request) is not None:
            raise Forbidden(
                "CSRF check failed: send the csrftoken cookie's value in the X-CSRFToken header."
            )
        return user


owner_auth = OwnerAuth()


# --- login and throttling ---------------------------------------------------------------------


def client_address(request: HttpRequest) -> str:
    # Behind a proxy the operator sets TALORYS_TRUST_X_FORWARDED_FOR; otherwise the socket address.
    if getattr(settings, "TRUST_X_FORWARDED_FOR", False):
        forwarded = request.headers.get("X-Forwarded-For", "")
        if forwarded:
            return forwarded.split(",")[0].strip()
    return request.META.get("REMOTE_ADDR", "unknown")


def _throttle_keys(*, address: str, username: str) -> list[tuple[str, int]]:
    return [
        (f"login-fail:addr:{address}", settings.LOGIN_FAILURES_PER_CLIENT),
        (f"login-fail:user:{username.lower()[:150]}", settings.LOGIN_FAILURES_PER_USERNAME),
    ]


def _check_throttle(keys: list[tuple[str, int]]) -> None:
    for key, limit in keys:
        if (cache.get(key) or 0) >= limit:
            raise RateLimited(
                "Too many failed logins. Wait a while and try again.",
                retry_after=settings.LOGIN_THROTTLE_WINDOW,
            )


def _record_failure(keys: list[tuple[str, int]]) -> None:
    window = settings.LOGIN_THROTTLE_WINDOW
    for key, _limit in keys:
        # add() is a no-op when the key exists, so the window starts at the first failure.
        cache.add(key, 0, timeout=window)
        try:
            cache.incr(key)
        except ValueError:  # expired between add and incr
            cache.set(key, 1, timeout=window)


def owner_login(*, request: HttpRequest, username: str, password: str) -> AbstractBaseUser:
    """Log the owner in, or raise. Throttled per client address and per username."""
    keys = _throttle_keys(address=client_address(request), username=username)
    _check_throttle(keys)
    user = authenticate(request, username=username, password=password)
    if user is None or not user.is_active:
        _record_failure(keys)
        raise Unauthorized("Wrong username or password.")
    login(request, user)
    now = timezone.now().timestamp()
    request.session[LOGIN_AT] = request.session[SEEN_AT] = now
    return user


# --- personal API tokens -----------------------------------------------------------------------


def api_token_create(*, user: AbstractBaseUser, name: str) -> tuple[ApiToken, str]:
    """Make a token; the raw secret is returned once and only its hash is stored."""
    name = name.strip()
    if not name:
        raise ValidationFailed("A token needs a name.")
    raw = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        user=user, name=name[:100], prefix=raw[:12], token_hash=_hash_token(raw)
    )
    return token, raw


def api_token_revoke(*, token_id: int) -> ApiToken:
    """Revoke a token; revoking one already revoked keeps its first revocation time."""
    ApiToken.objects.filter(pk=token_id, revoked_at__isnull=True).update(revoked_at=timezone.now())
    token = ApiToken.objects.filter(pk=token_id).first()
    if token is None:
        raise NotFound("No such token.")
    return token


def api_token_authenticate(*, raw: str) -> AbstractBaseUser | None:
    if not raw.startswith(TOKEN_PREFIX):
        return None
    token = (
        ApiToken.objects.select_related("user")
        .filter(token_hash=_hash_token(raw), revoked_at__isnull=True)
        .first()
    )
    if token is None or not token.user.is_active:
        return None
    now = timezone.now()
    # One write a minute at most: enough to show the owner which tokens are in use.
    if token.last_used_at is None or (now - token.last_used_at).total_seconds() > 60:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token.user
