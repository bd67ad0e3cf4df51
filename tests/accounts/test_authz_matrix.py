"""The authorization matrix: every caller against every API operation, every page and both sockets.

Callers: nobody, a forged session cookie, a session past its idle timeout or its lifetime, a
``read`` and a ``write`` token, another account's token, another account (plain, and staff but not
superuser), and the owner as the control. Routes are enumerated from the NinjaAPI and the
URLconf (tests/api/routes.py), so a route added later joins the matrix by itself.

Expected (``expected_problem`` checks it, and that no caller ever gets a 5xx):

==================  ======================  ======================  ===============  ==========  ===============
caller              API (token routes)      API (session only)      pages, admin     sockets     /mcp
==================  ======================  ======================  ===============  ==========  ===============
anonymous, forged,  401 envelope            401 envelope            login redirect   close 4401  401
expired sessions
read token          safe: allowed;          401 envelope            login redirect   close 4401  read tools only
                    unsafe: 403 envelope
write token         allowed                 401 envelope            login redirect   close 4401  every tool
another's token     401 envelope            401 envelope            login redirect   close 4401  401
another account,    401 envelope            401 envelope            login redirect   close 4401  401
staff non-owner
the owner           allowed                 allowed                 allowed          accepted    401 (token only)
==================  ======================  ======================  ===============  ==========  ===============

/v1 (the OpenAI-compatible endpoint, agent/completions/) takes a token and nothing else: a read
or a write token reaches every route (a read token's turn only gets read tools, tested in
tests/agent/test_openai_endpoint.py); every other caller, the owner's session included, gets
401 in OpenAI's error shape (``invalid_api_key``).

"Allowed" means the route was reached: no 401, 403 or login redirect (a sample id may still give
404 or 422). Every other account is no one to this app (talorys.accounts.owner.is_the_owner).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.http import HttpResponse
from django.test import Client

from agent.completions.api import v1_api
from config import urls as project_urls
from config.api import api
from config.asgi import application
from talorys.accounts.auth import WEBSOCKET_UNAUTHENTICATED
from talorys.accounts.middleware import LOGIN_AT, SEEN_AT
from talorys.accounts.models import ApiToken
from talorys.accounts.services import api_token_create
from talorys.lib.tools import Permission, all_tools
from talorys.owner.models import OwnerSettings
from talorys.owner.services.settings import SESSION_ONLY_SETTINGS
from tests.api.routes import (
    NOTHING_HERE,
    PUBLIC_API,
    PUBLIC_API_URLS,
    PUBLIC_PAGES,
    UNSAFE_METHODS,
    anonymous_rejection_problem,
    api_operations,
    envelope_code,
    fill_path,
    plain_path,
    sample_url_problem,
    send,
    session_only_operations,
    url_routes,
)
from tests.conftest import OWNER_PASSWORD

SESSION_ONLY = session_only_operations(api)
# (method, url, session only?) for every API operation that needs the owner.
API_CALLS = [
    (method, fill_path(template), (method, template) in SESSION_ONLY)
    for method, template in api_operations(api)
    if (method, plain_path(template)) not in PUBLIC_API
]
_OPERATION_URLS = {url.rstrip("/") for _method, url, _only in API_CALLS}
_URL_ROUTES = [
    route
    for route in url_routes(project_urls.urlpatterns)
    if route.url not in PUBLIC_PAGES | NOTHING_HERE
    and not route.url.startswith(("/static/", "/media/", "/v1/"))
    and route.url.rstrip("/") not in _OPERATION_URLS | {path for _m, path in PUBLIC_API_URLS}
]
# The API's own views outside ninja's operations (the schema and the docs): owner_auth, GET.
API_CALLS += [("GET", r.url, False) for r in _URL_ROUTES if r.url.startswith("/api/")]
# /v1: every operation of its NinjaAPI, and nothing else under /v1/ (the matrix checks it).
V1_CALLS = [(method, fill_path(template)) for method, template in api_operations(v1_api)]
# Pages are forms and links: GET shows, POST acts; both must be turned away.
PAGE_CALLS = [
    (method, r.url)
    for r in _URL_ROUTES
    if not r.url.startswith("/api/")
    for method in ("GET", "POST")
]
# Where the owner's control would end its own session.
_OWNER_SKIPS = {"/logout/", "/admin/logout/"}

SOCKETS = ["/ws/chat/", "/ws/notifications/"]
REFUSED_STATUS = {401, 403}


@dataclass
class Caller:
    """One caller: its client, the headers it sends, and what it does before each request."""

    name: str
    client: Client = field(default_factory=Client)
    headers: dict[str, str] = field(default_factory=dict)
    before: Callable[[Client], None] = lambda client: None
    token_scope: str | None = None  # the scope of the owner's token it carries, if any
    owner: bool = False

    def call(self, method: str, url: str) -> HttpResponse:
        self.before(self.client)
        return send(self.client, method, url, self.headers)


def logged_in_as(user: AbstractBaseUser) -> Callable[[Client], None]:
    # A session that logs a non-owner in is ended by the first request it makes; a fresh one each
    # time tests every route, not only the first.
    return lambda client: client.force_login(user)


def expired_as(owner: AbstractBaseUser, **clocks: float) -> Callable[[Client], None]:
    def expire(client: Client) -> None:
        client.force_login(owner)
        session = client.session
        session.update(clocks)
        session.save()

    return expire


def bearer(raw: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {raw}"}


def make_callers(owner: AbstractBaseUser, django_user_model: Any) -> list[Caller]:
    now = time.time()
    lifetime, idle = settings.SESSION_ABSOLUTE_LIFETIME, settings.SESSION_IDLE_TIMEOUT
    other = django_user_model.objects.create_user(username="lodger", password=OWNER_PASSWORD)
    staff = django_user_model.objects.create_user(
        username="helper", password=OWNER_PASSWORD, is_staff=True
    )
    _t, read = api_token_create(user=owner, name="reader")
    _t, write = api_token_create(user=owner, name="writer", scope=ApiToken.Scope.WRITE)
    _t, others = api_token_create(user=other, name="lodger's", scope=ApiToken.Scope.WRITE)
    forged = Client()
    forged.cookies[settings.SESSION_COOKIE_NAME] = "0123456789abcdefghijklmnopqrstuv"
    owners = Client()
    owners.force_login(owner)
    return [
        Caller("anonymous"),
        Caller("forged session", client=forged),
        Caller(
            "idle session",
            before=expired_as(owner, **{LOGIN_AT: now - idle - 60, SEEN_AT: now - idle - 60}),
        ),
        Caller(
            "outlived session",
            before=expired_as(owner, **{LOGIN_AT: now - lifetime - 60, SEEN_AT: now}),
        ),
        Caller("read token", headers=bearer(read), token_scope=ApiToken.Scope.READ),
        Caller("write token", headers=bearer(write), token_scope=ApiToken.Scope.WRITE),
        Caller("another account's token", headers=bearer(others)),
        Caller("another account", before=logged_in_as(other)),
        Caller("staff, not the owner", before=logged_in_as(staff)),
        Caller("the owner", client=owners, owner=True),
    ]


# One test per caller (its failures read apart); make_callers builds them in this order.
CALLER_NAMES = [
    "anonymous",
    "forged session",
    "idle session",
    "outlived session",
    "read token",
    "write token",
    "another account's token",
    "another account",
    "staff, not the owner",
    "the owner",
]


@pytest.fixture
def owner(db: None, django_user_model: Any) -> AbstractBaseUser:
    # The owner as talorys_setup makes it (accounts.services.owner_create): the superuser.
    return django_user_model.objects.create_superuser(username="owner", password=OWNER_PASSWORD)


def _body(response: HttpResponse) -> bytes:
    return b"(a stream)" if response.streaming else response.content[:120]


def _refused(response: HttpResponse, where: str, status: int, code: str) -> str | None:
    if response.status_code == status and envelope_code(response) == code:
        return None
    return f"{where}: {response.status_code} {_body(response)!r}, wanted {status} {code}"


def _reached(response: HttpResponse, where: str, *, admin: bool = False) -> str | None:
    # The admin answers 403 where a model is read-only (no add or delete): a rule, not a refusal.
    if admin and response.status_code == 403:
        return None
    if response.status_code in REFUSED_STATUS:
        return f"{where}: refused {response.status_code} {_body(response)!r}"
    if response.status_code in (301, 302) and "login" in response["Location"]:
        return f"{where}: sent to log in ({response['Location']})"
    return None


def api_problem(caller: Caller, method: str, url: str, session_only: bool) -> str | None:
    response = caller.call(method, url)
    where = f"{caller.name}: {method} {url}"
    if response.status_code >= 500:
        return f"{where}: {response.status_code}"
    if caller.owner:
        return _reached(response, where)
    if caller.token_scope is None or session_only:
        return _refused(response, where, 401, "UNAUTHORIZED")
    if caller.token_scope == ApiToken.Scope.READ and method in UNSAFE_METHODS:
        return _refused(response, where, 403, "FORBIDDEN")
    return _reached(response, where)


def openai_problem(caller: Caller, method: str, url: str) -> str | None:
    response = caller.call(method, url)
    where = f"{caller.name}: {method} {url}"
    if response.status_code >= 500:
        return f"{where}: {response.status_code}"
    if caller.token_scope is not None:
        return _reached(response, where)
    body = response.json() if response.status_code == 401 else {}
    if body.get("error", {}).get("code") == "invalid_api_key" and set(body["error"]) == {
        "message",
        "type",
        "param",
        "code",
    }:
        return None
    return f"{where}: {response.status_code} {_body(response)!r}, wanted 401 invalid_api_key"


def page_problem(caller: Caller, method: str, url: str) -> str | None:
    response = caller.call(method, url)
    where = f"{caller.name}: {method} {url}"
    if response.status_code >= 500:
        return f"{where}: {response.status_code}"
    if caller.owner:
        return _reached(response, where, admin=url.startswith("/admin/"))
    if response.status_code == 405:  # the route does not serve this method to anyone
        return None
    # Tokens are for the API: to a page, a token's bearer is nobody.
    return anonymous_rejection_problem(caller.client, method, url, response)


def test_the_matrix_covers_every_route():
    problems = [sample_url_problem(r) for r in _URL_ROUTES]
    assert [p for p in problems if p] == []
    assert {"/admin/", "/admin/auth/user/", "/tasks/", "/api/docs"} <= {r.url for r in _URL_ROUTES}
    assert ("POST", "/api/bin/empty", True) in API_CALLS
    assert ("PATCH", "/api/settings", False) in API_CALLS
    assert len(PAGE_CALLS) > 200 and len(API_CALLS) > 60
    assert {("GET", "/v1/models"), ("POST", "/v1/chat/completions")} <= set(V1_CALLS)
    v1_routes = [r.url for r in url_routes(project_urls.urlpatterns) if r.url.startswith("/v1/")]
    assert {url for url in v1_routes if url not in NOTHING_HERE} == {url for _m, url in V1_CALLS}


@pytest.mark.parametrize("name", CALLER_NAMES)
def test_every_api_route_answers_each_caller_as_its_rights_say(owner, django_user_model, name):
    caller = make_callers(owner, django_user_model)[CALLER_NAMES.index(name)]
    calls = API_CALLS
    if caller.owner:  # its control reads only: writes with sample bodies would log it out
        calls = [call for call in API_CALLS if call[0] == "GET"]
    problems = [api_problem(caller, *call) for call in calls]
    assert [p for p in problems if p] == []


@pytest.mark.parametrize("name", CALLER_NAMES)
def test_every_openai_route_takes_a_token_and_nothing_else(owner, django_user_model, name):
    caller = make_callers(owner, django_user_model)[CALLER_NAMES.index(name)]
    problems = [openai_problem(caller, method, url) for method, url in V1_CALLS]
    assert [p for p in problems if p] == []


@pytest.mark.parametrize("name", CALLER_NAMES)
def test_every_page_answers_each_caller_as_its_rights_say(owner, django_user_model, name):
    caller = make_callers(owner, django_user_model)[CALLER_NAMES.index(name)]
    calls = PAGE_CALLS
    if caller.owner:
        calls = [(m, url) for m, url in PAGE_CALLS if m == "GET" and url not in _OWNER_SKIPS]
    problems = [page_problem(caller, method, url) for method, url in calls]
    assert [p for p in problems if p] == []


def test_a_write_token_cannot_change_the_provider_settings(owner):
    _t, raw = api_token_create(user=owner, name="writer", scope=ApiToken.Scope.WRITE)
    before = list(OwnerSettings.objects.values())
    for name in sorted(SESSION_ONLY_SETTINGS):
        boolean = OwnerSettings._meta.get_field(name).get_internal_type() == "BooleanField"
        value = True if boolean else "https://attacker.example/v1"
        response = Client().patch(
            "/api/settings", {name: value}, content_type="application/json", headers=bearer(raw)
        )
        assert response.status_code == 403, (name, response.content)
        assert envelope_code(response) == "FORBIDDEN"
    assert list(OwnerSettings.objects.values()) == before


def test_the_admin_is_the_owners_only(owner, django_user_model):
    staff = django_user_model.objects.create_user(
        username="helper", password=OWNER_PASSWORD, is_staff=True
    )
    for user, reached in ((owner, True), (staff, False)):
        client = Client()
        client.force_login(user)
        response = client.get("/admin/")
        assert (response.status_code == 200) is reached, (user, response.status_code)
    # Nor can the staff account log in to the admin, or to the app, with its right password.
    form = {"username": "helper", "password": OWNER_PASSWORD}
    assert Client().post("/admin/login/", form).status_code == 200  # the form again, with an error
    api_login = Client().post("/api/auth/login", form, content_type="application/json")
    assert api_login.status_code == 401
    assert api_login.json()["error"]["message"] == "Wrong username or password."


# --- the sockets ---------------------------------------------------------------------------------


def _handshake_headers(caller: Caller) -> list[tuple[bytes, bytes]]:
    caller.before(caller.client)
    headers = [(b"host", b"testserver"), (b"origin", b"http://testserver")]
    cookie = caller.client.cookies.get(settings.SESSION_COOKIE_NAME)
    if cookie is not None:
        headers.append((b"cookie", f"{cookie.key}={cookie.value}".encode()))
    headers += [(k.lower().encode(), v.encode()) for k, v in caller.headers.items()]
    return headers


@pytest.mark.django_db(transaction=True)
def test_the_sockets_accept_the_owner_only(owner, django_user_model):
    callers = make_callers(owner, django_user_model)
    assert [caller.name for caller in callers] == CALLER_NAMES

    async def handshake(path: str, headers: list[tuple[bytes, bytes]]) -> tuple[bool, object]:
        ws = WebsocketCommunicator(application, path, headers=headers)
        connected, code = await ws.connect(timeout=5)
        await ws.disconnect()
        return connected, code

    answers = {
        (caller.name, path): async_to_sync(handshake)(path, _handshake_headers(caller))
        for caller in callers
        for path in SOCKETS
    }
    wanted = {
        (caller.name, path): (True, None) if caller.owner else (False, WEBSOCKET_UNAUTHENTICATED)
        for caller in callers
        for path in SOCKETS
    }
    assert answers == wanted


# --- the MCP server (token only: the owner's session is no one there) -------------------------

MCP_HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


async def _mcp(headers: list[tuple[bytes, bytes]], method: str, params: dict) -> httpx.Response:
    transport = httpx.ASGITransport(app=application)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        sent = {k.decode(): v.decode() for k, v in headers} | MCP_HEADERS
        return await client.post("/mcp", json=body, headers=sent)


@pytest.mark.django_db(transaction=True)
def test_the_mcp_server_answers_tokens_of_the_owner_only_by_scope(owner, django_user_model):
    callers = make_callers(owner, django_user_model)
    read_tools = {t.name for t in all_tools() if t.permission == Permission.READ}

    # Each caller's cookie and headers, as a client would send them (a session is made first).
    sent = {caller.name: _handshake_headers(caller) for caller in callers}

    async def ask() -> dict[str, tuple[int, Any, Any]]:
        answers = {}
        for name, headers in sent.items():
            listed = await _mcp(headers, "tools/list", {})
            made = await _mcp(
                headers, "tools/call", {"name": "create_task", "arguments": {"title": name}}
            )
            names = (
                {t["name"] for t in listed.json()["result"]["tools"]}
                if listed.status_code == 200
                else None
            )
            refused = made.json()["result"].get("isError") if made.status_code == 200 else None
            answers[name] = (listed.status_code, names, refused)
        return answers

    answers = async_to_sync(ask)()
    every_tool = {t.name for t in all_tools()}
    wanted = {caller.name: (401, None, None) for caller in callers}
    wanted["read token"] = (200, read_tools, True)
    wanted["write token"] = (200, every_tool, False)
    assert answers == wanted
