"""The API's published surface: the HTTP contract (README, The API), and JSON errors everywhere."""

from __future__ import annotations

import re

import pytest

# (path, methods) from the HTTP contract, for the parts built so far.
CONTRACT = {
    "/api/health": {"get"},
    "/api/auth/login": {"post"},
    "/api/auth/logout": {"post"},
    "/api/auth/session": {"get"},
    "/api/projects": {"get", "post"},
    "/api/projects/{id}": {"get", "patch", "delete"},
    "/api/tasks": {"get", "post"},
    "/api/tasks/{id}": {"get", "patch", "delete"},
    "/api/tasks/quick": {"post"},
    "/api/notes": {"get", "post"},
    "/api/notes/{id}": {"get", "patch", "delete"},
    "/api/memories": {"get", "post"},
    "/api/memories/{id}": {"get", "patch", "delete"},
    "/api/memories/{id}/history": {"get"},
    "/api/notifications": {"get"},
    "/api/notifications/{id}/read": {"post"},
    "/api/settings": {"get", "patch"},
    "/api/usage": {"get"},
    "/api/search": {"get"},
}


@pytest.fixture
def published(api) -> dict[str, set[str]]:
    response = api.get("/api/openapi.json")
    assert response.status_code == 200
    return {
        re.sub(r"\{[^}]+\}", "{id}", path): set(operations)
        for path, operations in response.json()["paths"].items()
    }


@pytest.mark.parametrize("path", sorted(CONTRACT))
def test_openapi_lists_the_contract(published, path):
    assert path in published, f"{path} is missing from /api/openapi.json"
    assert CONTRACT[path] <= published[path]


def test_list_endpoints_publish_limit_and_offset(api):
    paths = api.get("/api/openapi.json").json()["paths"]

    for path in ["/api/projects", "/api/tasks", "/api/notes", "/api/memories"]:
        names = {p["name"] for p in paths[path]["get"]["parameters"]}
        assert {"limit", "offset"} <= names, path
    task_filters = {p["name"] for p in paths["/api/tasks"]["get"]["parameters"]}
    assert {"status", "project", "due_before", "due_after", "q"} <= task_filters


def assert_envelope(response, status: int, code: str) -> None:
    assert response.status_code == status
    assert response["Content-Type"].startswith("application/json")
    assert b"<html" not in response.content.lower()
    assert response.json()["error"]["code"] == code
    assert response.json()["error"]["message"]


@pytest.mark.parametrize("path", ["/api/nope", "/api/tasks/abc", "/api/projects/1/tasks"])
def test_unknown_api_paths_answer_json_404(api, path):
    assert_envelope(api.get(path), 404, "NOT_FOUND")


def test_unknown_api_paths_answer_json_404_when_logged_out(anon_api):
    assert_envelope(anon_api.get("/api/nope"), 404, "NOT_FOUND")


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("put", "/api/tasks"),
        ("delete", "/api/tasks"),
        ("post", "/api/usage"),
        ("put", "/api/settings"),
    ],
)
def test_wrong_methods_answer_json_405(api, method, path):
    response = getattr(api, method)(path, {}) if method != "delete" else api.delete(path)

    assert_envelope(response, 405, "METHOD_NOT_ALLOWED")


# --- every status an operation answers is declared (config/openapi.py) -------------------------


@pytest.fixture
def operations(api) -> dict[tuple[str, str], dict]:
    schema = api.get("/api/openapi.json").json()
    return {
        (method.upper(), path): operation
        for path, methods in schema["paths"].items()
        for method, operation in methods.items()
    }


def declared(operation: dict) -> set[int]:
    return {int(status) for status in operation["responses"]}


@pytest.mark.parametrize(
    ("method", "path", "statuses"),
    [
        # The owner's: 401; an id in the path: 404; input: 422; the database: 503.
        ("GET", "/api/tasks/{task_id}", {200, 401, 404, 422, 503}),
        # A change of an item: 403 (CSRF, a read token), 409, 413, and 400 for a body.
        ("PATCH", "/api/tasks/{task_id}", {200, 400, 401, 403, 404, 409, 413, 422, 503}),
        ("POST", "/api/tasks", {201, 400, 401, 403, 413, 422, 503}),
        # Anyone may call these: never 401.
        ("GET", "/api/health", {200, 503}),
        ("GET", "/api/auth/session", {200, 503}),
        # What the route adds to the rule: a wrong password, the throttle.
        ("POST", "/api/auth/login", {200, 400, 401, 413, 422, 429, 503}),
        ("POST", "/api/chat", {200, 400, 401, 403, 404, 409, 413, 422, 429, 503}),
    ],
)
def test_each_operation_declares_the_errors_it_can_answer(operations, method, path, statuses):
    assert declared(operations[(method, path)]) == statuses


def test_every_error_is_declared_as_the_envelope(operations, api):
    components = api.get("/api/openapi.json").json()["components"]["schemas"]
    assert components["ErrorOut"]["required"] == ["error"]
    assert set(components["ErrorDetailOut"]["required"]) == {"code", "message"}
    for (method, path), operation in operations.items():
        assert 503 in declared(operation), (method, path)
        for status, answer in operation["responses"].items():
            if int(status) >= 400 and (method, path, status) != ("GET", "/api/health", "503"):
                schema = answer["content"]["application/json"]["schema"]
                assert schema == {"$ref": "#/components/schemas/ErrorOut"}, (method, path, status)
