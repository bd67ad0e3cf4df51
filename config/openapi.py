"""/api/openapi.json declares every status an operation can answer, not only its success.

Each error is the envelope of talorys/lib/errors.py (``ErrorOut``, talorys/web/schemas.py), and
which errors an operation can meet follows from how it is built, in one place, so no route lists
them by hand:

* 503: every operation reads the database, which may be down or out of connections;
* 401: the owner's auth, unless anyone may call (the health's ``anyone``);
* 403: a session's unsafe method without its CSRF header, a read token's unsafe method;
* 400: a body (one that is not JSON, or a form that cannot be read);
* 404: a path with an item's id (the item is not there, or binned);
* 422: any input (a parameter or a body) or any change the services check;
* 413: any change (a body over TALORYS_MAX_BODY_BYTES);
* 409: a change of an item named in the path (it moved on: a version, a state);
* whatever the route's own ``response`` lists beside, for the few that answer more (the login
  throttle's 429, a day's budget spent, a form that cannot be read), with ``ErrorOut``.

``TalorysAPI`` builds the schema with ``ErrorsDeclared``, django-ninja's ``OpenAPISchema`` with
one more step after each operation's details (``operation_details``, its public per-operation
hook); tests/api/test_openapi.py fails when an upgrade stops calling it.
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

from ninja import NinjaAPI
from ninja.openapi.schema import REF_TEMPLATE, OpenAPISchema
from ninja.operation import Operation

from talorys.lib.errors import code_for_status
from talorys.ops.api import anyone
from talorys.web.schemas import ErrorOut

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def error_statuses(operation: Operation, details: dict[str, Any]) -> set[int]:
    """What ``operation`` can answer besides its success; ``details`` is its OpenAPI object."""
    methods = {method.upper() for method in operation.methods}
    changes = not methods <= SAFE_METHODS
    parameters = details.get("parameters") or []
    statuses = {HTTPStatus.SERVICE_UNAVAILABLE.value}
    if _owner_only(operation):
        statuses.add(HTTPStatus.UNAUTHORIZED.value)
        if changes:
            statuses.add(HTTPStatus.FORBIDDEN.value)
    if any(parameter["in"] == "path" for parameter in parameters):
        statuses.add(HTTPStatus.NOT_FOUND.value)
    if parameters or "requestBody" in details or changes:
        statuses.add(HTTPStatus.UNPROCESSABLE_ENTITY.value)
    if "requestBody" in details:
        statuses.add(HTTPStatus.BAD_REQUEST.value)
    if changes:
        statuses.add(HTTPStatus.REQUEST_ENTITY_TOO_LARGE.value)
        if HTTPStatus.NOT_FOUND.value in statuses:
            statuses.add(HTTPStatus.CONFLICT.value)
    return statuses


def _owner_only(operation: Operation) -> bool:
    """Whether a caller without the owner's session or token is refused (401): the route has
    auth, and none of it lets anyone in (the health's last auth, ``talorys.ops.api.anyone``)."""
    return bool(operation.auth_callbacks) and anyone not in operation.auth_callbacks


class ErrorsDeclared(OpenAPISchema):
    """django-ninja's schema, each operation's responses completed with its errors."""

    def operation_details(self, operation: Operation) -> dict[str, Any]:
        details = super().operation_details(operation)
        if ErrorOut.__name__ not in self.schemas:
            self.add_schema_definitions(_error_schemas())
        responses = details["responses"]
        for status in sorted(error_statuses(operation, details)):
            responses.setdefault(status, _error_response(status))
        return details


def _error_schemas() -> dict[str, Any]:
    """The envelope's JSON schema and the schemas it refers to, for the components."""
    schema = ErrorOut.model_json_schema(ref_template=REF_TEMPLATE)
    return schema.pop("$defs", {}) | {ErrorOut.__name__: schema}


def _error_response(status: int) -> dict[str, Any]:
    schema = {"$ref": REF_TEMPLATE.format(model=ErrorOut.__name__)}
    return {
        "description": f"{code_for_status(status)}: {HTTPStatus(status).phrase}",
        "content": {"application/json": {"schema": schema}},
    }


class TalorysAPI(NinjaAPI):
    """The one API (config/api.py), whose schema declares every answer (``ErrorsDeclared``)."""

    def get_openapi_schema(
        self, *, path_prefix: str | None = None, path_params: dict[str, Any] | None = None
    ) -> OpenAPISchema:
        if path_prefix is None:
            path_prefix = self.get_root_path(path_params or {})
        return ErrorsDeclared(self, path_prefix)
