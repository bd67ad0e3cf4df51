"""The one NinjaAPI: mounts every app's router and maps errors to the envelope once."""

from __future__ import annotations

from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse
from ninja.errors import AuthenticationError, HttpError
from ninja.errors import ValidationError as NinjaValidationError

from agent.api import router as agent_router
from approvals.api import router as approvals_router
from automations.api import router as automations_router
from backup.api import backup_router
from config.openapi import TalorysAPI
from files.api import router as files_router
from imports.api import imports_router
from memory.api import router as memory_router
from memory.api import search_router
from talorys.accounts.api import auth_router
from talorys.accounts.auth import NOT_AUTHENTICATED, api_login_required, owner_auth
from talorys.history.api import bin_router, changes_router
from talorys.lib.errors import (
    AppError,
    Unauthorized,
    ValidationFailed,
    code_for_status,
    database_unavailable,
    error_body,
)
from talorys.notifications.api import channels_router, notifications_router, push_router
from talorys.ops.api import anyone, health_router
from talorys.owner.api import models_router, settings_router, usage_router
from talorys.workspace.api import notes_router, projects_router, tasks_router

api = TalorysAPI(
    title="Talorys API",
    version="1",
    description="The owner's JSON API. Session cookie + X-CSRFToken header, or `Authorization: Bearer <token>`.",
    auth=owner_auth,
    urls_namespace="api",
    docs_decorator=api_login_required,  # the schema and docs are for the owner only
)


@api.exception_handler(AppError)
def _app_error(request: HttpRequest, exc: AppError) -> HttpResponse:
    return exc.retry_after_header(api.create_response(request, exc.envelope(), status=exc.status))


@api.exception_handler(DatabaseError)
def _database_error(request: HttpRequest, exc: DatabaseError) -> HttpResponse:
    # No connection to be had (the pool stayed empty): 503 SERVICE_UNAVAILABLE. Anything else
    # is a bug, left to the middleware's 500.
    busy = database_unavailable(exc)
    if busy is None:
        raise exc
    return _app_error(request, busy)


@api.exception_handler(NinjaValidationError)
def _validation_error(request: HttpRequest, exc: NinjaValidationError) -> HttpResponse:
    details = [
        {"loc": [str(part) for part in err.get("loc", ())], "message": err.get("msg", "invalid")}
        for err in exc.errors
    ]
    message = "; ".join(f"{'.'.join(d['loc'][1:]) or d['loc'][0]}: {d['message']}" for d in details)
    return api.create_response(
        request,
        error_body(ValidationFailed.code, message or "Invalid input.", details),
        status=ValidationFailed.status,
    )


@api.exception_handler(AuthenticationError)
def _unauthenticated(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
    return _app_error(request, Unauthorized(NOT_AUTHENTICATED))


@api.exception_handler(HttpError)
def _http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    return api.create_response(
        request,
        error_body(code_for_status(exc.status_code), str(exc.message)),
        status=exc.status_code,
    )


# Anyone may ask for the status; the owner (session or token) also gets the details.
api.add_router("/", health_router, auth=[owner_auth, anyone])
api.add_router("/auth", auth_router)
api.add_router("/projects", projects_router)
api.add_router("/tasks", tasks_router)
api.add_router("/notes", notes_router)
api.add_router("/notifications", notifications_router)
api.add_router("/settings", settings_router)
api.add_router("/usage", usage_router)
api.add_router("/models", models_router)
api.add_router("/search", search_router)
api.add_router("/memories", memory_router)
api.add_router("/files", files_router)
api.add_router("/", agent_router)
api.add_router("/", approvals_router)
api.add_router("/automations", automations_router)
api.add_router("/push", push_router)
api.add_router("/channels", channels_router)
api.add_router("/bin", bin_router)
api.add_router("/changes", changes_router)
api.add_router("/backup", backup_router)
api.add_router("/imports", imports_router)
