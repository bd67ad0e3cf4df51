"""One application error hierarchy, mapped to HTTP once (talorys/api.py, talorys/middleware.py)."""

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


def error_body(code: str, message: str, details: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {"code": code, "message": message}
    if details is not None:
        body["details"] = details
    return {"error": body}
