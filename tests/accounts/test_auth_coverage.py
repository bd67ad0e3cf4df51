"""Every URL and every API operation turns an anonymous visitor away, except the public few.

The routes are enumerated from the URLconf and the NinjaAPI at collection time, so a route added
later is tested without editing this file, and an unauthenticated one makes this test fail.
"""

from __future__ import annotations

import pytest
from django.http import HttpRequest, JsonResponse
from django.test import Client
from django.urls import include, path
from ninja import NinjaAPI, Router
from ninja.errors import AuthenticationError

from config import urls as project_urls
from config.api import api
from talorys.accounts.auth import owner_auth
from talorys.accounts.models import ApiToken
from talorys.accounts.services import api_token_create
from talorys.lib.errors import error_body
from tests.api.routes import (
    ALL_METHODS,
    NOTHING_HERE,
    PUBLIC_API,
    PUBLIC_API_URLS,
    PUBLIC_PAGES,
    UNSAFE_METHODS,
    UrlRoute,
    anonymous_rejection_problem,
    api_operations,
    envelope_code,
    fill_path,
    plain_path,
    sample_url_problem,
    schema_operations,
    send,
    session_only_operations,
    url_routes,
)

URL_ROUTES = url_routes(project_urls.urlpatterns)
API_OPERATIONS = api_operations(api)
PUBLIC_API_PATHS = {path for _method, path in PUBLIC_API}
SESSION_ONLY = session_only_operations(api)
UNSAFE_OPERATIONS = [
    op
    for op in API_OPERATIONS
    if op[0] in UNSAFE_METHODS and (op[0], plain_path(op[1])) not in PUBLIC_API
]


def route_problems(client: Client, route: UrlRoute) -> list[str]:
    """Why an anonymous visitor is not turned away from this route (empty: it is)."""
    if route.url in PUBLIC_PAGES or route.url.startswith(("/static/", "/media/")):
        return []
    unreachable = sample_url_problem(route)
    if unreachable:
        return [unreachable]
    problems = []
    answered = False
    for method in ALL_METHODS:
        if (method, route.url.rstrip("/")) in PUBLIC_API_URLS:
            answered = True
            continue
        response = send(client, method, route.url)
        if response.status_code == 405:  # this route does not serve that method at all
            continue
        answered = True
        if route.url in NOTHING_HERE:
            if response.status_code != 404 or envelope_code(response) not in (
                "NOT_FOUND",
                "not_found",
            ):
                problems.append(f"{method} {route.url}: {response.status_code}, wanted 404")
            continue
        problem = anonymous_rejection_problem(client, method, route.url, response)
        if problem:
            problems.append(problem)
    if not answered:
        problems.append(f"{route.url}: no method answered, so nothing was proved")
    return problems


@pytest.mark.parametrize("route", URL_ROUTES, ids=[r.route or "/" for r in URL_ROUTES])
def test_every_url_rejects_anonymous_visitors(db, route):
    assert route_problems(Client(), route) == []


@pytest.mark.parametrize(
    ("method", "template"),
    [op for op in API_OPERATIONS if (op[0], plain_path(op[1])) not in PUBLIC_API],
    ids=lambda value: value,
)
def test_every_api_operation_rejects_anonymous_requests(db, method, template):
    url = fill_path(template)
    response = send(Client(), method, url)
    assert anonymous_rejection_problem(Client(), method, url, response) is None


@pytest.mark.parametrize(("method", "template"), UNSAFE_OPERATIONS, ids=lambda value: value)
def test_every_unsafe_api_operation_refuses_a_read_token(owner, method, template):
    _token, raw = api_token_create(user=owner, name="reader")
    response = send(Client(), method, fill_path(template), {"Authorization": f"Bearer {raw}"})
    if (method, template) in SESSION_ONLY:
        assert response.status_code == 401, response.content[:200]
        assert envelope_code(response) == "UNAUTHORIZED"
    else:
        assert response.status_code == 403, response.content[:200]
        assert envelope_code(response) == "FORBIDDEN"
        assert "may only read" in response.json()["error"]["message"]


@pytest.mark.parametrize(
    ("method", "template"),
    sorted(op for op in SESSION_ONLY if op[0] in UNSAFE_METHODS),
    ids=lambda value: value,
)
def test_session_only_operations_refuse_a_write_token(owner, method, template):
    _token, raw = api_token_create(user=owner, name="writer", scope=ApiToken.Scope.WRITE)
    response = send(Client(), method, fill_path(template), {"Authorization": f"Bearer {raw}"})
    assert response.status_code == 401, response.content[:200]
    assert envelope_code(response) == "UNAUTHORIZED"


def test_the_token_enumeration_sees_the_session_only_routes():
    assert {("POST", "/api/auth/tokens"), ("POST", "/api/auth/password")} <= SESSION_ONLY
    assert ("PATCH", "/api/settings") in UNSAFE_OPERATIONS
    assert ("PATCH", "/api/settings") not in SESSION_ONLY


def test_the_enumeration_sees_the_whole_api_and_the_admin():
    assert schema_operations(api) <= {(m, plain_path(p)) for m, p in API_OPERATIONS}
    assert {("GET", "/api/tasks"), ("POST", "/api/auth/tokens")} <= set(API_OPERATIONS)
    routes = {route.route for route in URL_ROUTES}
    assert {"admin/", "admin/auth/user/", "api/docs", "api/openapi.json", ""} <= routes
    # Every API path is also a URL route, so both tests look at the same surface.
    urls = {route.url.rstrip("/") for route in URL_ROUTES}
    assert {fill_path(template) for _method, template in API_OPERATIONS} <= urls


def test_the_public_routes_exist_and_answer_anonymous_visitors(db):
    assert {(m, plain_path(p)) for m, p in API_OPERATIONS} >= PUBLIC_API
    client = Client()
    assert client.get("/api/health").status_code == 200
    assert client.get("/api/auth/session").json()["authenticated"] is False
    login = send(client, "POST", "/api/auth/login")
    assert login.status_code == 422  # reached the handler: it validated the body
    assert client.get("/login/").status_code == 200
    assert client.get("/admin/login/").status_code == 200
    worker = client.get("/sw.js")
    assert worker.status_code == 200 and worker["Service-Worker-Allowed"] == "/"


def test_the_docs_and_schema_need_the_owner(api, anon_api):
    for url in ("/api/docs", "/api/openapi.json"):
        assert anon_api.get(url).status_code == 401
        assert api.get(url).status_code == 200


# --- the checks catch an open route ---------------------------------------------------------------

_probe_api = NinjaAPI(urls_namespace="probe", auth=owner_auth, openapi_url=None, docs_url=None)
_probe_api.add_exception_handler(
    AuthenticationError,
    lambda request, exc: JsonResponse(error_body("UNAUTHORIZED", "Log in."), status=401),
)
_probe_router = Router()


@_probe_router.get("/closed")
def _closed(request: HttpRequest) -> dict:
    return {}


@_probe_router.post("/open", auth=None)
def _open(request: HttpRequest) -> dict:
    return {"secret": "anyone can see this"}


_probe_api.add_router("/", _probe_router)


def _open_page(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"secret": "anyone can see this"})


# This module doubles as the URLconf of the next test: the project's URLs plus two open routes.
urlpatterns = [
    path("open-page/", _open_page, name="open-page"),
    path("api/probe/", _probe_api.urls),
    path("", include(project_urls.urlpatterns)),
]


@pytest.mark.urls(__name__)
def test_an_unauthenticated_route_added_later_is_caught(db):
    routes = url_routes(urlpatterns)
    problems = [p for route in routes for p in route_problems(Client(), route)]
    # Exactly the two open routes are reported; /api/probe/ is the probe API's root, which answers
    # 404 to everyone like ours but is not on this test's list of such roots.
    assert {problem.split(":")[0] for problem in problems} == (
        {f"{method} /open-page/" for method in ALL_METHODS}
        | {"POST /api/probe/open"}
        | {f"{method} /api/probe/" for method in ALL_METHODS}
    )
    assert ("POST", "/api/probe/open") in api_operations(_probe_api)
