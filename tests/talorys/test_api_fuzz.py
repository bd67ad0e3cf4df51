"""Schemathesis against every operation of /api/openapi.json, as the logged-in owner (session
and CSRF header): no answer is a 5xx, and every error answer is the JSON envelope.

Positive cases (what the schema allows) and negative ones (what it does not: huge numbers,
wrong types, malformed bodies), a few dozen per operation, through Django's test client on the
suite's database (PostgreSQL or SQLite). /api/chat streams a model turn: it is left out here
(its input checks are tested in tests/agent).
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode, urlsplit

import schemathesis
from django.core.cache import cache
from django.db import transaction
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis.generation.modes import GenerationMode

from tests.conftest import ApiClient
from tests.talorys.routes import envelope_code

EXAMPLES = 20
# Logging out would end the session the rest of the run uses.
SKIPPED = {("POST", "/api/chat"), ("POST", "/api/auth/logout")}


def _schema(api) -> Any:
    response = api.get("/api/openapi.json")
    assert response.status_code == 200
    return schemathesis.openapi.from_dict(response.json())


def _send(api, case) -> Any:
    kwargs = case.as_transport_kwargs(base_url="http://testserver")
    url = urlsplit(kwargs["url"])
    headers = {
        key: value
        for key, value in (kwargs.get("headers") or {}).items()
        if key.lower() not in {"content-length", "user-agent", "cookie", "authorization"}
    }
    content_type = headers.pop("Content-Type", headers.pop("content-type", "application/json"))
    if "json" in kwargs:
        data: Any = json.dumps(kwargs["json"])
    else:
        data = kwargs.get("data") or b""
    params = kwargs.get("params") or {}
    headers["X-CSRFToken"] = api.csrf_token
    return api.client.generic(
        case.method.upper(),
        url.path,
        data=data,
        content_type=content_type,
        headers=headers,
        QUERY_STRING=urlencode(params, doseq=True) if params else url.query,
    )


def _problem(case, response) -> str | None:
    where = f"{case.method.upper()} {case.formatted_path} query={case.query!r} body={case.body!r}"
    if response.status_code >= 500:
        return f"{where}: {response.status_code} {response.content[:300]!r}"
    if response.status_code >= 400 and envelope_code(response) is None:
        return f"{where}: {response.status_code} without the envelope: {response.content[:300]!r}"
    return None


def test_no_operation_answers_a_server_error_or_an_error_outside_the_envelope(owner):
    api = ApiClient(Client(enforce_csrf_checks=True, raise_request_exception=False))
    assert api.login().status_code == 200
    schema = _schema(api)
    problems: list[str] = []
    operations = 0
    for result in schema.get_all_operations():
        operation = result.ok()
        if (operation.method.upper(), operation.path) in SKIPPED:
            continue
        operations += 1
        # Fuzzed logins and password changes fill the login throttle; the owner logs in afresh.
        cache.clear()
        if not api.get("/api/auth/session").json()["authenticated"]:
            assert api.login().status_code == 200
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):

            @given(case=operation.as_strategy(generation_mode=mode))
            @settings(
                max_examples=EXAMPLES,
                deadline=None,
                database=None,
                derandomize=True,
                suppress_health_check=list(HealthCheck),
            )
            def run(case) -> None:
                # A server error on PostgreSQL aborts the test's transaction: roll back to here so
                # that the run goes on and reports every one.
                savepoint = transaction.savepoint()
                response = _send(api, case)
                if response.status_code >= 500:
                    transaction.savepoint_rollback(savepoint)
                else:
                    transaction.savepoint_commit(savepoint)
                problem = _problem(case, response)
                if problem:
                    problems.append(problem)

            try:
                run()
            except Unsatisfiable:  # nothing in this operation can be made invalid
                assert mode == GenerationMode.NEGATIVE
    assert operations > 40
    assert problems == []
