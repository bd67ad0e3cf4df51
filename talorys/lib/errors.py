"""One application error hierarchy, mapped to HTTP once (talorys/api.py, talorys/lib/middleware.py)."""

from __future__ import annotations

from typing import Any


class AppError(Exception):
    code = "ERROR"
    status = 400

    def __init__(self, message: str, *, details: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def envelope(self) -> dict[str, Any]:
        return error_body(self.code, self.message, self.details)


class BadRequest(AppError):
    code = "BAD_REQUEST"
    status = 400


class ValidationFailed(AppError):
    code = "VALIDATION"
    status = 422


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


class RateLimited(AppError):
    code = "RATE_LIMITED"
    status = 429

    def __init__(self, message: str, *, retry_after: int = 60, details: Any = None) -> None:
        super().__init__(message, details=details)
        self.retry_after = retry_after


class BudgetExhausted(AppError):
    code = "BUDGET_EXHAUSTED"
    status = 429


class ServiceUnavailable(AppError):
    code = "SERVICE_UNAVAILABLE"
    status = 503

    def __init__(self, message: str, *, retry_after: int = 5, details: Any = None) -> None:
        super().__init__(message, details=details)
        self.retry_after = retry_after


DATABASE_BUSY = "The server is busy (no database connection is free). Try again in a moment."
# PostgreSQL's too_many_connections: max_connections reached (no pool, or pools of several
# processes adding up past it).
_TOO_MANY_CONNECTIONS = "53300"


def database_unavailable(error: BaseException) -> ServiceUnavailable | None:
    """A ServiceUnavailable when ``error`` means no database connection could be had: the
    connection pool stayed empty for its whole timeout (psycopg_pool.PoolTimeout, which Django
    wraps in its OperationalError) or PostgreSQL refused another client. Else None.

    These are load, not bugs: the client should try again, so they answer 503, never 500.
    """
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        kind = type(current)
        if kind.__name__ == "PoolTimeout" and kind.__module__.startswith("psycopg_pool"):
            return ServiceUnavailable(DATABASE_BUSY)
        if getattr(current, "sqlstate", None) == _TOO_MANY_CONNECTIONS or (
            kind.__name__ == "OperationalError" and "too many clients" in str(current)
        ):
            return ServiceUnavailable(DATABASE_BUSY)
        current = current.__cause__ or current.__context__
    return None


def error_body(code: str, message: str, details: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {"code": code, "message": message}
    if details is not None:
        body["details"] = details
    return {"error": body}
