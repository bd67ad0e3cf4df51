"""The owner's account: login and its throttling (shared by the admin's login), password
changes, ending sessions, and personal API tokens. Request authentication is in auth.py.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import secrets
import threading
from collections.abc import Iterator
from importlib import import_module

from django.conf import settings
from django.contrib.auth import (
    SESSION_KEY,
    authenticate,
    get_user_model,
    login,
    update_session_auth_hash,
)
from django.contrib.auth.models import User
from django.contrib.auth.password_validation import validate_password
from django.contrib.sessions.backends.base import SessionBase
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import HttpRequest
from django.utils import timezone

from talorys.accounts.counters import counter_hit, counter_retry_after, counters_use
from talorys.accounts.middleware import LOGIN_AT, SEEN_AT
from talorys.accounts.models import ApiToken
from talorys.accounts.owner import is_the_owner, one_owner_message, the_owner
from talorys.lib.actors import OWNER, Actor
from talorys.lib.errors import (
    Conflict,
    Forbidden,
    NotFound,
    RateLimited,
    Unauthorized,
    ValidationFailed,
)
from talorys.lib.validation import has_nul, one_line, refuse_nul

TOKEN_PREFIX = "tal_"
# Who made, changed or revoked which API token: one line each, after the commit.
audit = logging.getLogger("talorys.audit")


def _hash_token(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


def _session_store_class() -> type[SessionBase]:
    return import_module(settings.SESSION_ENGINE).SessionStore


# --- login and throttling ---------------------------------------------------------------------


def client_address(request: HttpRequest) -> str:
    # Behind a proxy the operator sets TALORYS_TRUST_X_FORWARDED_FOR; otherwise the socket address,
    # because a client can write any X-Forwarded-For it likes.
    # Each proxy appends the address it saw, so only the rightmost TRUSTED_PROXY_HOPS entries were
    # written by our proxies; anything left of them is the client's own text.
    if settings.TRUST_X_FORWARDED_FOR:
        forwarded = [part.strip() for part in request.headers.get("X-Forwarded-For", "").split(",")]
        forwarded = [part for part in forwarded if part]
        if forwarded:
            hops = max(1, settings.TRUSTED_PROXY_HOPS)
            return forwarded[-hops] if len(forwarded) >= hops else forwarded[0]
    return request.META.get("REMOTE_ADDR", "unknown")


def _cache_key(kind: str, value: str) -> str:
    # Hashed: usernames and forwarded addresses are client text, and some cache backends
    # (memcached) refuse keys with spaces or control characters.
    return f"login-fail:{kind}:{hashlib.sha256(value.encode()).hexdigest()[:32]}"


def _throttle_keys(*, address: str, username: str) -> list[tuple[str, int]]:
    return [
        (_cache_key("addr", address), settings.LOGIN_FAILURES_PER_CLIENT),
        (_cache_key("user", username.lower()), settings.LOGIN_FAILURES_PER_USERNAME),
    ]


def _reserve_attempt(keys: list[tuple[str, int]]) -> None:
    """Count this attempt against every limit before the password is checked, or raise.

    The count comes first (healthchecks' TokenBucket spends the token, then decides): with a read
    now and a write after the slow hash, a burst of concurrent guesses all read "below the
    limit" and all reach the hasher. cache.incr is atomic in every backend we use (locmem
    locks, Redis INCR), so of N concurrent attempts at most `limit` see a count within it.
    A success clears the counts (_clear_failures); a failure simply leaves its count in place.
    """
    window = settings.LOGIN_THROTTLE_WINDOW
    refused = [key for key, limit in keys if counter_hit(key, window=window) > limit]
    if refused:
        raise RateLimited(
            "Too many failed logins. Wait a while and try again.",
            retry_after=counter_retry_after(refused[0], window=window),
        )


def _clear_failures(keys: list[tuple[str, int]]) -> None:
    names = [name for key, _limit in keys for name in (key, f"{key}:since")]
    counters_use(lambda store: store.delete_many(names))


# A password hash is deliberately expensive (argon2: about 100 MiB and a core for a fraction of a
# second), so a process checks at most LOGIN_CONCURRENT_HASHES passwords at once; more answer 429
# at once instead of queueing memory and CPU behind them. Made on first use, and again if the
# setting changes (tests); a holder releases the semaphore it took.
_hash_slots: tuple[int, threading.BoundedSemaphore] | None = None
_hash_slots_lock = threading.Lock()


def _password_hash_slots() -> threading.BoundedSemaphore:
    global _hash_slots
    size = max(1, settings.LOGIN_CONCURRENT_HASHES)
    with _hash_slots_lock:
        if _hash_slots is None or _hash_slots[0] != size:
            _hash_slots = (size, threading.BoundedSemaphore(size))
        return _hash_slots[1]


@contextlib.contextmanager
def _password_check(keys: list[tuple[str, int]]) -> Iterator[None]:
    """Hold a hash slot and a counted attempt for one password check (see _reserve_attempt).

    The slot is taken first so that an attempt refused for lack of one costs no try.
    """
    slots = _password_hash_slots()
    if not slots.acquire(blocking=False):
        raise RateLimited("Too many logins at once. Try again in a moment.", retry_after=1)
    try:
        _reserve_attempt(keys)
        yield
    finally:
        slots.release()


def owner_authenticate(*, request: HttpRequest, username: str, password: str) -> User:
    """Check a username and password under the login throttle, or raise; does not log in.

    Every login form goes through here (the API, /login/ and /admin/login/), so failures on any
    of them count toward one limit per client address and per username. The attempt is counted
    before the password is checked, so that a locked-out attacker learns nothing from a right
    guess either, and a concurrent burst cannot check more passwords than the limit.
    """
    username = username.strip()
    keys = _throttle_keys(address=client_address(request), username=username)
    with _password_check(keys):
        # PostgreSQL cannot even look up a name with a NUL character: no such user, like any other.
        user = (
            None
            if has_nul(username)
            else authenticate(request, username=username, password=password)
        )
    # Another account gets the answer a wrong password gets: who else has one is nobody's business.
    if not isinstance(user, User) or not is_the_owner(user):
        raise Unauthorized("Wrong username or password.")
    _clear_failures(keys)
    return user


def owner_session_key_renew(*, request: HttpRequest) -> None:
    """A new session key for a login over a session that is already logged in (the old key
    stops working). Django's login() rotates the key only for an anonymous session or another
    user: a second login of the same owner kept the key, so a key that leaked once stayed good."""
    if SESSION_KEY in request.session:
        request.session.cycle_key()


def owner_login(*, request: HttpRequest, username: str, password: str) -> User:
    """Log the owner in, or raise (see owner_authenticate)."""
    user = owner_authenticate(request=request, username=username, password=password)
    owner_session_key_renew(request=request)
    login(request, user)  # rotates the session key of an anonymous session: no fixation
    now = timezone.now().timestamp()
    request.session[LOGIN_AT] = request.session[SEEN_AT] = now
    return user


# --- passwords and sessions ----------------------------------------------------------------------


def _validated(password: str, user: User | None) -> str:
    try:
        validate_password(password, user)
    except ValidationError as exc:
        raise ValidationFailed(" ".join(exc.messages), details=exc.messages) from exc
    return password


def owner_sessions_end(*, user: User, keep_session_key: str | None = None) -> int:
    """Delete the user's stored sessions except keep_session_key; returns how many ended.

    A password change already invalidates old sessions on their next request (Django compares the
    password-derived session hash); deleting the rows as well ends them for good, also for a
    session-store reader such as the WebSocket. Stores that cannot be listed (cache-only) rely
    on the hash alone.
    """
    store = _session_store_class()
    if not hasattr(store, "get_model_class"):
        return 0
    model = store.get_model_class()
    live = model.objects.filter(expire_date__gt=timezone.now())
    # A single-owner install has a handful of sessions: decoding each is cheap.
    ended = [
        session.session_key
        for session in live.exclude(session_key=keep_session_key or "")
        if str(session.get_decoded().get(SESSION_KEY)) == str(user.pk)
    ]
    model.objects.filter(session_key__in=ended).delete()
    if hasattr(store, "cache_key_prefix"):  # cached_db keeps a copy in the cache too
        cache.delete_many([store.cache_key_prefix + key for key in ended])
    return len(ended)


def owner_password_set(*, user: User, password: str, keep_session_key: str | None = None) -> User:
    """Set a validated password and end every session of the user but ``keep_session_key``
    (setup --reset-password ends them all)."""
    _validated(password, user)
    with transaction.atomic():
        user.set_password(password)
        user.save(update_fields=["password"])
        owner_sessions_end(user=user, keep_session_key=keep_session_key)
    return user


def owner_password_change(
    *, request: HttpRequest, current_password: str, new_password: str
) -> User:
    """Change the logged-in user's password. Every other session ends; this one stays.

    A wrong current password counts as a failed login, so a stolen session cookie cannot be used
    to guess the password at leisure.
    """
    user = request.user
    if not isinstance(user, User):  # the API asks for the owner's session before this
        raise Unauthorized("Log in first.")
    keys = _throttle_keys(address=client_address(request), username=user.get_username())
    with _password_check(keys):
        right = user.check_password(current_password)
    if not right:
        raise Forbidden("The current password is wrong.")
    _clear_failures(keys)
    if current_password == new_password:
        raise ValidationFailed("The new password must differ from the current one.")
    owner_password_set(
        user=user, password=new_password, keep_session_key=request.session.session_key
    )
    # Re-signs this session with the new password hash, which also rotates its key.
    update_session_auth_hash(request, user)
    return user


def owner_create(*, username: str, password: str) -> User:
    """Create the owner, the install's one superuser (owner.py): it also operates this
    single-person install, so may use /admin/. Refused once the owner exists."""
    username = username.strip()
    if not username:
        raise ValidationFailed("The owner needs a username.")
    owner = the_owner()
    if owner is not None:
        raise ValidationFailed(one_owner_message(owner))
    user_model = get_user_model()
    _validated(password, user_model(username=username))
    if user_model.objects.filter(username=username).exists():
        raise ValidationFailed(f"A user named {username!r} exists already.")
    return user_model.objects.create_superuser(username=username, password=password, email="")


# --- personal API tokens -----------------------------------------------------------------------


def _token_checked(name: str, scope: str) -> str:
    """The token's name, stripped, or ValidationFailed for it or the scope."""
    if scope not in ApiToken.Scope.values:
        raise ValidationFailed(f"A token's scope is one of: {', '.join(ApiToken.Scope.values)}.")
    name = one_line(refuse_nul(name, field="name")).strip()
    if not name:
        raise ValidationFailed("A token needs a name.")
    if len(name) > ApiToken.NAME_MAX:
        raise ValidationFailed(f"A token name has at most {ApiToken.NAME_MAX} characters.")
    return name


def _audit(token: ApiToken, what: str, actor: Actor) -> None:
    line = f"API token {token.pk} ({token.prefix}, {token.name!r}) {what} by {actor.source}"
    transaction.on_commit(lambda: audit.info(line))


def api_token_create(
    *, user: User, name: str, scope: str = ApiToken.Scope.READ, actor: Actor = OWNER
) -> tuple[ApiToken, str]:
    """Make a token; the raw secret is returned once and only its hash is stored."""
    name = _token_checked(name, scope)
    raw = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        user=user, name=name, prefix=raw[:12], token_hash=_hash_token(raw), scope=scope
    )
    _audit(token, f"made with scope {scope}", actor)
    return token, raw


def api_token_update(
    *, user: User, token_id: int, name: str, scope: str, actor: Actor = OWNER
) -> ApiToken:
    """Rename a live token or change its scope (the admin's edit), each change audited."""
    name = _token_checked(name, scope)
    with transaction.atomic():
        token = ApiToken.objects.select_for_update().filter(user=user, pk=token_id).first()
        if token is None:
            raise NotFound("No such token.")
        if token.revoked_at is not None:
            raise Conflict("This token is revoked: make a new one instead.")
        changes = {f: (getattr(token, f), v) for f, v in (("name", name), ("scope", scope))}
        changes = {f: old_new for f, old_new in changes.items() if old_new[0] != old_new[1]}
        for field, (old, new) in changes.items():
            setattr(token, field, new)
            _audit(token, f"{field} changed from {old!r} to {new!r}", actor)
        token.save(update_fields=list(changes))
    return token


def api_token_revoke(*, user: User, token_id: int, actor: Actor = OWNER) -> ApiToken:
    """Revoke one of the user's tokens; revoking it again keeps its first revocation time."""
    tokens = ApiToken.objects.filter(user=user, pk=token_id)
    if tokens.filter(revoked_at__isnull=True).update(revoked_at=timezone.now()):
        _audit(tokens.get(), "revoked", actor)
    token = tokens.first()
    if token is None:
        raise NotFound("No such token.")
    return token


def bearer_secret(authorization: str | None) -> str | None:
    """The secret an ``Authorization: Bearer …`` header carries (trimmed, maybe empty), or None
    when there is no such header. Only the reading is shared: /api, /v1 and /mcp each answer a
    missing or wrong token in their own shape (the envelope, OpenAI's, the MCP gate's)."""
    if authorization is None or authorization[:7].lower() != "bearer ":
        return None
    return authorization[7:].strip()


def api_token_authenticate(*, raw: str) -> ApiToken | None:
    """The live token with this secret (its user loaded), or None; tokens of any account but the
    owner's are nobody's (owner.is_the_owner)."""
    if not raw.startswith(TOKEN_PREFIX):
        return None
    token = (
        ApiToken.objects.select_related("user")
        .filter(token_hash=_hash_token(raw), revoked_at__isnull=True)
        .first()
    )
    if token is None or not is_the_owner(token.user):
        return None
    now = timezone.now()
    # One write a minute at most: enough to show the owner which tokens are in use.
    if token.last_used_at is None or (now - token.last_used_at).total_seconds() > 60:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token
