"""Schemathesis against every operation of /api/openapi.json, as the logged-in owner (session
and CSRF header) and with a `read` and a `write` token: no answer is a 5xx, every error answer
is the JSON envelope, every status is one the schema declares for its operation (schemathesis's
status_code_conformance), and every JSON answer, success or error, matches its schema. As the
owner, the contract too (positive_data_acceptance, negative_data_rejection): what the schema
allows is not refused as invalid, and what it does not allow is refused, but for the rules JSON
Schema cannot say (BEYOND_THE_SCHEMA).

Positive cases (what the schema allows) and negative ones (what it does not: huge numbers,
wrong types, malformed bodies), through Django's test client on the suite's database
(PostgreSQL or SQLite). TALORYS_FUZZ_EXAMPLES is how many of each kind per operation and caller:
`make test` runs 30 positive and 30 negative as the owner (60 per operation, in two halves of
the operations) and, with TALORYS_FUZZ_TOKEN_EXAMPLES, 10 and 10 with each token (a token's
answers are mostly its rights: a read token is refused every write before its input is looked
at); `make fuzz` 500 and 500 as the owner (1,000 per operation) and 200 and 200 with each token.
/api/chat streams a model turn: it is left out here (its input checks are tested in tests/agent).

The MCP endpoint has no OpenAPI schema: it is fuzzed by its JSON-RPC methods (MCP's methods,
tools/call with every tool's name, any params, and any other JSON), with a read and a write token.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlencode, urlsplit

import httpx
import pytest
import schemathesis
from django.core.cache import cache
from django.db import transaction
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from schemathesis.generation.modes import GenerationMode
from schemathesis.specs.openapi.checks import (
    negative_data_rejection,
    positive_data_acceptance,
    response_schema_conformance,
    status_code_conformance,
)

from config.asgi import application
from config.mcp import access as mcp
from memory.models import Memory
from talorys.accounts.services import api_token_create
from talorys.lib.tools import all_tools
from talorys.workspace.models import Note, Project, Task
from tests.api.routes import envelope_code
from tests.conftest import ApiClient

# The owner's pass in `make test` is the suite's longest test (50 and 50 took 4 minutes of a
# worker on a quiet machine, a tenth of the suite's CPU): 30 and 30 still reach every operation
# with valid and invalid input (derandomized: the same cases each run); `make fuzz` goes deep.
EXAMPLES = int(os.environ.get("TALORYS_FUZZ_EXAMPLES", "30"))
_TOKEN_EXAMPLES = os.environ.get("TALORYS_FUZZ_TOKEN_EXAMPLES")
# Per /api operation and kind with a token: its answers are mostly its rights (a read token is
# refused every write before the input is read). 10 reach every operation and kind with each
# token, and gave every status per operation that 25 gave (compared once, 162 token/operation
# pairs) in a quarter to a half of the time; the owner's examples fuzz the input.
TOKEN_EXAMPLES = int(_TOKEN_EXAMPLES or 10)
# /v1 and /mcp have a few operations with many inputs each: 50 per kind (or twice the tokens' N).
RPC_EXAMPLES = 2 * int(_TOKEN_EXAMPLES or 25)
# Logging out would end the session the rest of the run uses.
SKIPPED = {("POST", "/api/chat"), ("POST", "/api/auth/logout")}


def fuzzed(examples: int) -> settings:
    """Hypothesis's settings for a fuzz run: the same cases each run, no deadline, no database."""
    return settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )


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
    elif kwargs.get("files") is not None:
        content_type, data = _multipart(kwargs["files"], kwargs.get("data"))
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


def _multipart(files: list[tuple[str, Any]], fields: Any) -> tuple[str, bytes]:
    """A multipart form (POST /api/files) as a browser sends it; a part's value that is neither
    text nor bytes as its text, a name that UTF-8 cannot carry with its surrogates replaced."""

    def text(value: Any) -> Any:
        if isinstance(value, bytes):
            return value
        value = value if isinstance(value, str) else json.dumps(value)
        return value.encode("utf-8", "surrogatepass").decode("utf-8", "replace")

    parts = [(text(name), (p[0] and text(p[0]), text(p[1]))) for name, p in files]
    request = httpx.Request("POST", "http://testserver/", files=parts, data=fields or None)
    return request.headers["content-type"], request.read()


# The contract checks (the owner's run): what the schema allows is not refused as invalid (422),
# and what it does not allow is refused. The schema says what the services check wherever JSON
# Schema can say it (lengths, bounds, choices, patterns: no NUL, years 1900-2199, a URL's scheme,
# a key's characters, the kinds of search). What it cannot say are the refusals below: a row
# that must exist, one field against another or against the clock, and the syntax of a cron
# line, an Apprise URL, a push subscription or a backup document, which their own checks read.
BEYOND_THE_SCHEMA = (
    "does not exist",  # a project_id, superseded_by... naming no row
    "must not be after",  # valid_from after valid_to
    "Quiet hours need both",  # quiet_hours_start without quiet_hours_end
    "Name the model to test",  # a connection test's base_url without its model
    "that time has passed",  # a once schedule in the past
    "message must not be empty",  # an automation's message, which its kind may need
    "five cron fields",  # a cron line's syntax (talorys/lib/schedules.py)
    "not an address Apprise can send to",  # talorys/notifications/channels.py
    "PushSubscription",  # a push subscription's keys and endpoint (talorys/notifications/push.py)
    "has no backup",  # the backup import reads its body itself (backup/api.py)
    "has no checkbox number",  # a note's task list: how many boxes its content holds
    "is only a date",  # a task in words that says no more than when (talorys/lib/when.py)
    "a task is due once",  # a task in words that repeats ("every monday")
    "Say what to do",  # a task in words with nothing left once the date is read
)
# Routes whose 422 is about what an uploaded file holds, which no JSON Schema can say: another
# tool's export (imports/readers/) is a JSON or zip document of its own.
FILE_CONTENT_ROUTES = {"/api/imports"}


def _refusal(response) -> str:
    """A 422's message, or ""."""
    if response.status_code != 422 or envelope_code(response) is None:
        return ""
    return str(response.json()["error"].get("message", ""))


def _beyond_the_schema(response) -> bool:
    if response.status_code == 415 and envelope_code(response) == "UNSUPPORTED_MEDIA_TYPE":
        return True  # an upload's type, read from its bytes (files/sniff.py)
    if response.status_code == 422 and response.request["PATH_INFO"] in FILE_CONTENT_ROUTES:
        return True
    return any(rule in _refusal(response) for rule in BEYOND_THE_SCHEMA)


def _contract_checks(response) -> list:
    if _beyond_the_schema(response):
        return []
    return [positive_data_acceptance, negative_data_rejection]


def _problem(case, response, *, contract: bool = False) -> str | None:
    where = f"{case.method.upper()} {case.formatted_path} query={case.query!r} body={case.body!r}"
    if _refusal(response):
        where += f" ({_refusal(response)[:120]})"
    if response.status_code >= 500:
        return f"{where}: {response.status_code} {response.content[:300]!r}"
    if response.status_code >= 400 and envelope_code(response) is None:
        return f"{where}: {response.status_code} without the envelope: {response.content[:300]!r}"
    # Every status is one the schema declares for this operation, and what the schema promises
    # for it (a success's shape, an error's envelope) is what was sent.
    checks = [status_code_conformance, *(_contract_checks(response) if contract else [])]
    if not response.streaming and response.get("Content-Type", "").startswith(
        "application/json"
    ):  # the backup export streams: a test of its own reads it
        checks.append(response_schema_conformance)
    answer = httpx.Response(
        response.status_code,
        headers={key: value for key, value in response.items()},
        content=b"" if response.streaming else response.content,
        request=httpx.Request(case.method.upper(), f"http://testserver{case.formatted_path}"),
    )
    answer.elapsed = dt.timedelta(0)  # set by a real transport; the test client has none
    try:
        case.validate_response(answer, checks=checks)
    except BaseExceptionGroup as failure:  # schemathesis raises its own failure groups
        return f"{response.status_code} is not as declared: {where}: {failure}"[:800]
    return None


def _token(api: ApiClient, scope: str) -> str:
    made = api.post("/api/auth/tokens", {"name": f"fuzz {scope}", "scope": scope})
    assert made.status_code in (200, 201), made.content
    return made.json()["token"]


# The owner's run is the longest (twice the examples), so it is made in two halves of the
# operations, which the suite's workers can take at the same time (pytest-xdist, the Makefile).
# A half took about 2 minutes with 50 and 50 on a quiet machine and 7 beside two CPU-bound processes: its
# timeout is for a hang only.
@pytest.mark.timeout(1800)
@pytest.mark.parametrize(
    ("caller", "half"), [("session", 0), ("session", 1), ("read", None), ("write", None)]
)
def test_no_operation_answers_a_server_error_or_an_error_outside_the_envelope(owner, caller, half):
    api = ApiClient(Client(enforce_csrf_checks=True, raise_request_exception=False))
    assert api.login().status_code == 200
    schema = _schema(api)
    examples = EXAMPLES
    if caller != "session":
        # The token is the only credential: a fresh client without the session cookie.
        token = _token(api, caller)
        api = ApiClient(Client(raise_request_exception=False, HTTP_AUTHORIZATION=f"Bearer {token}"))
        api.csrf_token = ""
        examples = TOKEN_EXAMPLES
    problems: list[str] = []
    operations = 0
    for number, result in enumerate(schema.get_all_operations()):
        operation = result.ok()
        if (operation.method.upper(), operation.path) in SKIPPED:
            continue
        if half is not None and number % 2 != half:
            continue
        operations += 1
        # Fuzzed logins and password changes fill the login throttle; the owner logs in afresh.
        cache.clear()
        if caller == "session" and not api.get("/api/auth/session").json()["authenticated"]:
            assert api.login().status_code == 200
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):

            @given(case=operation.as_strategy(generation_mode=mode))
            @fuzzed(examples)
            def run(case) -> None:
                # A server error on PostgreSQL aborts the test's transaction: roll back to here so
                # that the run goes on and reports every one.
                savepoint = transaction.savepoint()
                response = _send(api, case)
                if response.status_code >= 500:
                    transaction.savepoint_rollback(savepoint)
                else:
                    transaction.savepoint_commit(savepoint)
                problem = _problem(case, response, contract=caller == "session")
                if problem:
                    problems.append(problem)

            try:
                run()
            except Unsatisfiable:  # nothing in this operation can be made invalid
                assert mode == GenerationMode.NEGATIVE
    assert operations > (40 if half is None else 20)
    assert not problems, "\n".join(problem[:400] for problem in problems)


# /v1 (agent/completions/) by its own schema, with each token (its only credential). A chat
# completion runs a model turn: only its invalid requests are fuzzed (they are answered before any
# turn starts); the turns are tested with the openai client (tests/agent/test_openai_endpoint.py).
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("scope", ["read", "write"])
def test_no_openai_operation_answers_a_server_error_or_an_error_outside_its_shape(owner, scope):
    from agent.completions.api import v1_api
    from talorys.accounts.services import api_token_create

    _token, raw = api_token_create(user=owner, name=f"fuzz {scope}", scope=scope)
    api = ApiClient(Client(raise_request_exception=False, HTTP_AUTHORIZATION=f"Bearer {raw}"))
    schema = schemathesis.openapi.from_dict(v1_api.get_openapi_schema())
    problems: list[str] = []
    operations = [result.ok() for result in schema.get_all_operations()]
    assert {(o.method.upper(), o.path) for o in operations} >= {
        ("GET", "/v1/models"),
        ("POST", "/v1/chat/completions"),
    }
    for operation in operations:
        modes = [GenerationMode.NEGATIVE]
        if operation.path != "/v1/chat/completions":
            modes.insert(0, GenerationMode.POSITIVE)
        for mode in modes:

            @given(case=operation.as_strategy(generation_mode=mode))
            @fuzzed(RPC_EXAMPLES)
            def run(case) -> None:
                response = _send(api, case)
                problem = _problem(case, response)
                if problem is None and response.status_code >= 400:
                    error = response.json()["error"]
                    if set(error) != {"message", "type", "param", "code"}:
                        problem = f"{case.formatted_path}: not OpenAI's error shape: {error}"
                if problem:
                    problems.append(problem)

            try:
                run()
            except Unsatisfiable:  # GET /v1/models: nothing in it can be made invalid
                assert mode == GenerationMode.NEGATIVE
    assert not problems, "\n".join(problem[:400] for problem in problems)


def test_an_answer_that_does_not_match_its_schema_is_reported(owner):
    """The conformance check can fail: a health answer without its status is caught."""
    from django.http import JsonResponse

    api = ApiClient(Client(enforce_csrf_checks=True, raise_request_exception=False))
    assert api.login().status_code == 200
    operation = next(
        result.ok()
        for result in _schema(api).get_all_operations()
        if (result.ok().method.upper(), result.ok().path) == ("GET", "/api/health")
    )
    case = operation.Case()
    assert _problem(case, JsonResponse({"database": "ok"})) is not None
    assert _problem(case, api.get("/api/health")) is None


def _answer(body: dict, status: int) -> Any:
    """An answer as the test client gives it (with ``json()``), made by hand."""
    from django.http import JsonResponse

    response = JsonResponse(body, status=status)
    response.json = lambda: body  # type: ignore[attr-defined]
    return response


def test_a_status_the_operation_does_not_declare_is_reported(owner):
    """The status check can fail: a status the operation does not declare is caught, and so is
    an error envelope that does not match its schema."""
    api = ApiClient(Client(enforce_csrf_checks=True, raise_request_exception=False))
    assert api.login().status_code == 200
    operation = next(
        result.ok()
        for result in _schema(api).get_all_operations()
        if (result.ok().method.upper(), result.ok().path) == ("GET", "/api/tasks/{task_id}")
    )
    case = operation.Case(path_parameters={"task_id": 1})
    conflict = _answer({"error": {"code": "CONFLICT", "message": "Changed."}}, 409)
    assert "409 is not as declared" in (_problem(case, conflict) or "")
    missing = _answer({"error": {"code": "NOT_FOUND", "message": "Not there."}}, 404)
    assert _problem(case, missing) is None
    shapeless = _answer({"error": {"code": 404, "message": "Not there."}}, 404)
    assert "404 is not as declared" in (_problem(case, shapeless) or "")


# --- the MCP endpoint, by its JSON-RPC methods ---------------------------------------------------

MCP_METHODS = [
    "initialize",
    "notifications/initialized",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "prompts/list",
]


def _json_values() -> Any:
    scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=40)
    return st.recursive(
        scalars,
        lambda inner: (
            st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
        ),
        max_leaves=12,
    )


def _mcp_messages() -> Any:
    """JSON-RPC messages: MCP's methods (tools/call with every tool's name) with any params, and
    anything else a client could send."""
    names = st.sampled_from(sorted(t.name for t in all_tools())) | st.text(max_size=20)
    call = st.fixed_dictionaries(
        {
            "name": names,
            "arguments": st.dictionaries(st.text(max_size=12), _json_values(), max_size=5),
        }
    )
    params = call | st.fixed_dictionaries({"uri": st.text(max_size=40)}) | _json_values()
    message = st.fixed_dictionaries(
        {
            "jsonrpc": st.just("2.0") | st.text(max_size=4),
            "id": st.integers() | st.text(max_size=8) | st.none(),
            "method": st.sampled_from(MCP_METHODS) | st.text(max_size=20),
            "params": params,
        }
    )
    return message | _json_values()


@contextmanager
def _loop_thread() -> Iterator[asyncio.AbstractEventLoop]:
    """One event loop for a whole run, in its own thread, as daphne has: the MCP server keeps
    its session manager on the loop that serves it (config/mcp/http.py)."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        yield loop
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("scope", ["read", "write"])
def test_the_mcp_endpoint_answers_fuzzed_json_rpc_without_a_server_error(owner, scope):
    """Every answer is below 500, and JSON when it is a 200; a read token changes nothing, and a
    write token deletes nothing (a delete only ever waits for the owner's approval)."""
    _token, raw = api_token_create(user=owner, name=f"fuzz {scope}", scope=scope)
    headers = {
        "authorization": f"Bearer {raw}",
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
    }
    problems: list[str] = []

    async def post(body: bytes) -> httpx.Response:
        transport = httpx.ASGITransport(app=application)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            return await client.post("/mcp", content=body, headers=headers)

    with _loop_thread() as loop:

        @given(message=_mcp_messages())
        @fuzzed(RPC_EXAMPLES)
        def run(message: Any) -> None:
            # The token's minute (the count in the cache, the executors) would refuse most of it.
            cache.clear()
            mcp.windows.clear()
            body = json.dumps(message).encode()
            response = asyncio.run_coroutine_threadsafe(post(body), loop).result(60)
            if response.status_code >= 500:
                problems.append(f"{response.status_code} for {body[:300]!r}")
            elif response.status_code == 200 and response.content:
                try:
                    response.json()
                except ValueError:
                    problems.append(f"not JSON for {body[:300]!r}: {response.content[:200]!r}")

        run()
    assert not problems, "\n".join(problems[:20])
    binned = [m.objects.filter(deleted_at__isnull=False).count() for m in (Task, Note, Memory)]
    assert binned == [0, 0, 0]
    if scope == "read":
        assert [m.objects.count() for m in (Task, Note, Memory, Project)] == [0, 0, 0, 0]
