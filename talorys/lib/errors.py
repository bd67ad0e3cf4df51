"""The one application error root and the one status→code map.

Every error the API envelope can show derives from ``AppError``: the services' errors below, the
tool contract's ``ToolError`` (talorys/lib/tools.py) and the model clients' ``ProviderError``
(talorys/providers/base.py). ``STATUS_CODES`` names the code for an HTTP status that Django or
django-ninja answered without an ``AppError``; config/api.py and talorys/web/middleware.py both
read it.
"""

from __future__ import annotations

from typing import Any


class AppError(Exception):
    """An error with a stable ``code`` and an HTTP ``status``; its message is shown as is.

    ``code`` is the class's unless the instance is given its own (tools and providers name their
    failures more finely: ``NOT_UNDOABLE``, ``PROVIDER_TIMEOUT``...). A refusal of one input names
    it in ``details["field"]`` (``field_refused``): API clients and the admin's forms
    (talorys/web/service_admin.py) read the field there, never out of the message. A refusal
    that passes with time says when in ``retry_after`` (seconds): every transport that answers
    it sends the ``Retry-After`` header (``retry_after_header``).
    """

    code: str = "ERROR"
    status: int = 400
    retry_after: int | None = None

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        details: Any = None,
        retry_after: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.details = details
        if code is not None:
            self.code = code
        if retry_after is not None:
            self.retry_after = retry_after

    def retry_after_header(self, response: Any) -> Any:
        """``response`` with ``Retry-After`` set when this refusal passes with time."""
        if self.retry_after:
            response["Retry-After"] = str(self.retry_after)
        return response

    def envelope(self) -> dict[str, Any]:
        return error_body(self.code, self.message, self.details)


class BadRequest(AppError):
    code = "BAD_REQUEST"
    status = 400


class ValidationFailed(AppError):
    code = "VALIDATION"
    status = 422


def field_refused(message: str, *, field: str) -> ValidationFailed:
    """The ValidationFailed for one input, named by its API name in ``details["field"]``."""
    return ValidationFailed(message, details={"field": field})


class NotFound(AppError):
    code = "NOT_FOUND"
    status = 404


class Conflict(AppError):
    code = "CONFLICT"
    status = 409


class Unauthorized(AppError):
    code = "UNAUTHORIZED"
    status = 401


class Forbidden(AppError):
    code = "FORBIDDEN"
    status = 403


class UnsupportedMediaType(AppError):
    code = "UNSUPPORTED_MEDIA_TYPE"
    status = 415


class RateLimited(AppError):
    code = "RATE_LIMITED"
    status = 429
    retry_after = 60


class BudgetExhausted(AppError):
    code = "BUDGET_EXHAUSTED"
    status = 429


class ServiceUnavailable(AppError):
    code = "SERVICE_UNAVAILABLE"
    status = 503
    retry_after = 5


class InternalError(AppError):
    """A bug, not the caller's doing nor the server's state: logged with its traceback."""

    code = "INTERNAL"
    status = 500


# The code for an HTTP status answered without an AppError (an unknown path, a wrong method, a
# ninja HttpError...). The one map: the middleware and the API's handlers both read it.
STATUS_CODES: dict[int, str] = {
    400: BadRequest.code,
    401: Unauthorized.code,
    403: Forbidden.code,
    404: NotFound.code,
    405: "METHOD_NOT_ALLOWED",
    409: Conflict.code,
    413: "TOO_LARGE",
    415: UnsupportedMediaType.code,
    422: ValidationFailed.code,
    429: RateLimited.code,
    503: ServiceUnavailable.code,
}


def code_for_status(status: int) -> str:
    """The envelope's code for an HTTP status: ``STATUS_CODES``, else ERROR (4xx) or INTERNAL."""
    return STATUS_CODES.get(status, "ERROR" if status < 500 else InternalError.code)


DATABASE_BUSY = "The server is busy (no database connection is free). Try again in a moment."
DATABASE_DOWN = "The database is not answering right now. Try again in a moment."
DISK_FULL = "The server's disk is full: nothing was saved. Free some space, then try again."
# PostgreSQL's too_many_connections: max_connections reached (no pool, or pools of several
# processes adding up past it).
_TOO_MANY_CONNECTIONS = "53300"
# PostgreSQL going away: connection exceptions (class 08) and the server shutting down or
# starting up (admin_shutdown, crash_shutdown, cannot_connect_now).
_SERVER_GONE = ("08", "57P01", "57P02", "57P03")
_DISK_FULL = "53100"  # PostgreSQL's disk_full


def _database_refusal(error: BaseException) -> str | None:
    """Why ``error`` (one link of a chain) means the database cannot serve now, or None."""
    kind = type(error)
    sqlstate = getattr(error, "sqlstate", None)
    if kind.__name__ == "PoolTimeout" and kind.__module__.startswith("psycopg_pool"):
        return DATABASE_BUSY
    if sqlstate == _TOO_MANY_CONNECTIONS or (
        kind.__name__ == "OperationalError" and "too many clients" in str(error)
    ):
        return DATABASE_BUSY
    if sqlstate == _DISK_FULL or getattr(error, "sqlite_errorname", None) == "SQLITE_FULL":
        return DISK_FULL
    if isinstance(sqlstate, str) and sqlstate.startswith(_SERVER_GONE):
        return DATABASE_DOWN
    # psycopg's own OperationalError without a SQLSTATE never came from the server: the
    # connection could not be made or was lost (refused, reset, closed under the query).
    gone = kind.__name__ == "OperationalError" and kind.__module__.startswith("psycopg")
    return DATABASE_DOWN if gone and sqlstate is None else None


def database_unavailable(error: BaseException) -> ServiceUnavailable | None:
    """A ServiceUnavailable when ``error`` means the database cannot serve now: no connection
    could be had (the pool stayed empty for its whole timeout, PostgreSQL refused another client,
    is down or went away mid-request), or its disk is full (SQLite's SQLITE_FULL, PostgreSQL's
    disk_full). Django wraps each in its own DatabaseError; the cause chain is walked. Else None.

    These are the server's state, not bugs: they answer 503 with Retry-After, never 500.
    """
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        reason = _database_refusal(current)
        if reason is not None:
            return ServiceUnavailable(reason, retry_after=30 if reason == DISK_FULL else 5)
        current = current.__cause__ or current.__context__
    return None


def classify_failure(error: BaseException, *, message: str) -> ServiceUnavailable | InternalError:
    """What an unexpected ``error`` is answered with: the ServiceUnavailable (503) of
    ``database_unavailable`` when the database cannot serve now, else an InternalError (500,
    INTERNAL) with ``message``. The caller logs the traceback of an InternalError only: the
    other is load, not a bug."""
    return database_unavailable(error) or InternalError(message)


def error_body(code: str, message: str, details: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {"code": code, "message": message}
    if details is not None:
        body["details"] = details
    return {"error": body}
