"""Every route the project serves, enumerated from the URLconf and from the NinjaAPI.

The auth-coverage and CSRF tests are built on these lists, so a route added later is covered
without anyone editing a test, and a route nobody can reach with a sample URL fails loudly.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.http import HttpResponse
from django.test import Client
from django.urls import URLPattern, URLResolver, resolve, reverse
from django.urls.exceptions import Resolver404
from ninja import NinjaAPI

UNSAFE_METHODS = ("POST", "PUT", "PATCH", "DELETE")
ALL_METHODS = ("GET", *UNSAFE_METHODS)

# Anyone may use these. Keep the list short: everything else requires the owner.
PUBLIC_API = {
    ("GET", "/api/health"),
    ("POST", "/api/auth/login"),
    ("GET", "/api/auth/session"),
    # Deciding from a Web Push notification: no session; the capability that only that push
    # carried is the credential, and anything else is refused (tests/approvals/test_push_decision.py).
    ("POST", "/api/approvals/{action_id}/push-decision"),
}
# /sw.js is the Web Push service worker: one static script with no data in it, which the browser
# re-fetches for updates whether or not the session is still alive (talorys/notifications/views.py).
# /manifest.webmanifest names the app and its icons for installing it; the browser fetches it
# without cookies, and it holds nothing of the owner's. /favicon.ico redirects to the app's icon.
# /calendar/<secret>.ics is the calendar feed, fetched by calendar apps without a session: the
# secret in the path is the capability (tests/automations/test_calendar.py: a wrong one is a 404).
PUBLIC_PAGES = {
    "/login/",
    "/admin/login/",
    "/sw.js",
    "/manifest.webmanifest",
    "/favicon.ico",
    "/calendar/1.ics",
}
# PUBLIC_API as the URLs a visitor requests (a path's parameters filled in).
PUBLIC_API_URLS = {(method, re.sub(r"\{\w+\}", "1", path)) for method, path in PUBLIC_API}
# The APIs' roots answer 404 to everyone: they exist only so that ninja can reverse its own URLs.
NOTHING_HERE = {"/api/", "/v1/"}

_SAMPLES = {
    "int": "1",
    "str": "1",
    "path": "1",
    "slug": "x",
    "uuid": "00000000-0000-0000-0000-000000000001",
}
_ROUTE_PARAM = re.compile(r"<(?:(?P<conv>\w+):)?(?P<name>\w+)>")
_NINJA_PARAM = re.compile(r"\{(?:(?P<conv>\w+):)?(?P<name>\w+)\}")
_REGEX_GROUP = re.compile(r"\(\?P<(?P<name>\w+)>(?P<body>[^()]*)\)")


@dataclass(frozen=True)
class UrlRoute:
    route: str  # as Django reports it in ResolverMatch.route
    url: str  # a concrete URL that resolves to this route
    name: str


def _sample_regex(regex: str) -> str:
    def fill(match: re.Match) -> str:
        body = match["body"]
        if re.fullmatch(r"[\w|]+", body):  # a choice of words: take the first
            return body.split("|")[0]
        if "\\d" in body or "[0-9]" in body:
            return "1"
        return "x"

    return _REGEX_GROUP.sub(fill, regex).removeprefix("^").removesuffix("$").replace("\\", "")


def _sample(pattern: Any) -> str:
    text = str(pattern)
    if pattern.__class__.__name__ == "RegexPattern":
        return _sample_regex(text)
    return _ROUTE_PARAM.sub(lambda m: _SAMPLES.get(m["conv"] or "str", "1"), text)


def _walk(patterns: list, route: str, url: str, namespace: str) -> list[UrlRoute]:
    found = []
    for pattern in patterns:
        part = str(pattern.pattern)
        part_route = part if not route else part.removeprefix("^")
        if isinstance(pattern, URLResolver):
            inner = f"{namespace}{pattern.namespace}:" if pattern.namespace else namespace
            found += _walk(
                pattern.url_patterns, route + part_route, url + _sample(pattern.pattern), inner
            )
        elif isinstance(pattern, URLPattern):
            found.append(
                UrlRoute(
                    route=route + part_route,
                    url="/" + url + _sample(pattern.pattern),
                    name=namespace + (pattern.name or ""),
                )
            )
    return found


def url_routes(patterns: list) -> list[UrlRoute]:
    """Every URL pattern, admin and API included, once per distinct route."""
    routes: dict[str, UrlRoute] = {}
    for found in _walk(patterns, "", "", ""):
        routes.setdefault(found.route, found)
    return list(routes.values())


def sample_url_problem(route: UrlRoute) -> str | None:
    """None when route.url really reaches the route; otherwise why not (teach _sample)."""
    try:
        match = resolve(route.url)
    except Resolver404:
        return f"the sample URL {route.url} for {route.route!r} resolves nowhere"
    if match.route != route.route:
        return f"the sample URL {route.url} for {route.route!r} reaches {match.route!r}"
    return None


def api_operations(api: NinjaAPI) -> list[tuple[str, str]]:
    """(method, path template) for every operation of the API, hidden ones included."""
    root = reverse(f"{api.urls_namespace}:api-root").rstrip("/")
    operations = set()
    # The bound routers carry every operation as served, include_in_schema=False included.
    for bound in api._get_bound_routers():
        for path, path_view in bound.path_operations.items():
            full = re.sub("/+", "/", f"{root}/{bound.prefix}/{path}").rstrip("/")
            for operation in path_view.operations:
                operations.update((method, full) for method in operation.methods)
    return sorted(operations)


def session_only_operations(api: NinjaAPI) -> set[tuple[str, str]]:
    """(method, path template) of the operations that refuse API tokens (owner_session_auth)."""
    from talorys.accounts.auth import OwnerAuth

    root = reverse(f"{api.urls_namespace}:api-root").rstrip("/")
    found = set()
    for bound in api._get_bound_routers():
        for path, path_view in bound.path_operations.items():
            full = re.sub("/+", "/", f"{root}/{bound.prefix}/{path}").rstrip("/")
            for operation in path_view.operations:
                callbacks = operation.auth_callbacks
                if callbacks and all(
                    isinstance(cb, OwnerAuth) and not cb.tokens for cb in callbacks
                ):
                    found.update((method, full) for method in operation.methods)
    return found


def schema_operations(api: NinjaAPI) -> set[tuple[str, str]]:
    """(method, path) from the OpenAPI schema, to check that api_operations misses nothing."""
    paths = api.get_openapi_schema()["paths"]
    return {
        (method.upper(), _NINJA_PARAM.sub(lambda m: "{" + m["name"] + "}", path).rstrip("/"))
        for path, item in paths.items()
        for method in item
    }


def plain_path(template: str) -> str:
    return _NINJA_PARAM.sub(lambda m: "{" + m["name"] + "}", template)


def fill_path(template: str, ids: dict[str, int] | None = None) -> str:
    ids = ids or {}
    return _NINJA_PARAM.sub(
        lambda m: str(ids.get(m["name"], _SAMPLES.get(m["conv"] or "str", "1"))), template
    )


def send(client: Client, method: str, url: str, headers: dict | None = None) -> HttpResponse:
    body = "{}" if method != "GET" else None
    return client.generic(
        method, url, data=body or "", content_type="application/json", headers=headers or {}
    )


def _login_urls() -> set[str]:
    return {settings.LOGIN_URL, reverse("admin:login")}


def envelope_code(response: HttpResponse) -> str | None:
    if not response.get("Content-Type", "").startswith("application/json"):
        return None
    body = response.json()
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict) or not error.get("message"):
        return None
    return error.get("code")


def anonymous_rejection_problem(
    client: Client, method: str, url: str, response: HttpResponse
) -> str | None:
    """None when an anonymous request was turned away as it should be; otherwise what happened.

    API: 401 with the error envelope. /v1 (OpenAI's API): 401 in OpenAI's shape, for a bad key.
    Pages: a redirect that ends on a login page.
    """
    where = f"{method} {url}"
    if url.startswith("/v1/"):
        if response.status_code == 401 and envelope_code(response) == "invalid_api_key":
            return None
        return f"{where}: {response.status_code} {response.content[:120]!r}, wanted 401 invalid_api_key"
    if url.startswith("/api/"):
        if response.status_code == 401 and envelope_code(response) == "UNAUTHORIZED":
            return None
        return f"{where}: {response.status_code} {response.content[:120]!r}, wanted 401 envelope"
    for _hop in range(4):
        if response.status_code not in (301, 302, 303, 307, 308):
            return f"{where}: {response.status_code}, wanted a redirect to the login page"
        location = response["Location"]
        path = location.split("?")[0]
        if path in _login_urls():
            return None
        response = client.get(location)  # e.g. the admin's logout sends to its index first
    return f"{where}: too many redirects without reaching a login page"
