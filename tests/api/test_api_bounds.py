"""Numbers past what the database holds, and unreadable bodies, are bad input (4xx with the
envelope), never a 500: paging, path ids, query and body ids, malformed multipart bodies.

Every list and every path id is found by enumeration, so a route added later is covered.
"""

from __future__ import annotations

import re

import pytest

from config.api import api as ninja_api
from talorys.web.pagination import MAX_LIMIT, MAX_OFFSET
from talorys.workspace.models import Task
from tests.api.routes import api_operations, envelope_code, fill_path

PAST_64_BITS = 2**63
OPERATIONS = api_operations(ninja_api)


def _list_paths() -> list[str]:
    paths = ninja_api.get_openapi_schema()["paths"]
    return sorted(
        path
        for path, item in paths.items()
        if any(p["name"] == "offset" for p in item.get("get", {}).get("parameters", []))
    )


LISTS = _list_paths()
PATH_ID_OPERATIONS = [op for op in OPERATIONS if "{int:" in op[1]]


def _filled(path: str) -> str:
    return re.sub(r"\{\w+\}", "1", path)


def assert_envelope(response, status: int, code: str) -> None:
    assert response.status_code == status, response.content[:300]
    assert envelope_code(response) == code


def test_the_enumeration_finds_the_lists_and_the_path_ids():
    assert {"/api/tasks", "/api/notes", "/api/auth/tokens", "/api/memories"} <= set(LISTS)
    assert ("GET", "/api/tasks/{int:task_id}") in PATH_ID_OPERATIONS


@pytest.mark.parametrize("path", LISTS)
def test_every_list_bounds_limit_and_offset_in_its_schema(path):
    params = ninja_api.get_openapi_schema()["paths"][path]["get"]["parameters"]
    bounds = {p["name"]: p["schema"].get("maximum") for p in params}
    assert bounds["limit"] == MAX_LIMIT and bounds["offset"] == MAX_OFFSET


@pytest.mark.parametrize("path", LISTS)
@pytest.mark.parametrize(
    "params",
    [
        {"limit": PAST_64_BITS},
        {"offset": PAST_64_BITS},
        {"offset": 2**63 - 1},
        {"limit": 10, "offset": 10**30},
        {"limit": MAX_LIMIT + 1},
    ],
    ids=["huge-limit", "offset-past-64-bits", "offset-at-64-bits", "offset-10e30", "limit+1"],
)
def test_paging_past_the_bounds_is_a_422_on_every_list(api, path, params):
    assert_envelope(api.get(_filled(path), params), 422, "VALIDATION")


@pytest.mark.parametrize("path", LISTS)
def test_the_last_allowed_offset_is_an_empty_page(api, path):
    if "{" in path:  # the list of a row (an automation's runs): no such row here
        response = api.get(_filled(path), {"limit": MAX_LIMIT, "offset": MAX_OFFSET})
        assert_envelope(response, 404, "NOT_FOUND")
        return
    response = api.get(path, {"limit": MAX_LIMIT, "offset": MAX_OFFSET})
    assert response.status_code == 200, response.content[:300]
    assert response.json()["items"] == []


@pytest.mark.parametrize(("method", "template"), PATH_ID_OPERATIONS, ids=lambda value: value)
def test_a_path_id_past_64_bits_is_not_found(api, method, template):
    ids = {name: PAST_64_BITS for name in _path_names(template)}
    response = api.client.generic(
        method,
        fill_path(template, ids),
        data="{}" if method != "GET" else "",
        content_type="application/json",
        headers={"X-CSRFToken": api.csrf_token},
    )
    assert_envelope(response, 404, "NOT_FOUND")


def _path_names(template: str) -> list[str]:
    return re.findall(r"\{int:(\w+)\}", template)


@pytest.mark.parametrize("value", [PAST_64_BITS, 10**30, 0, -1])
def test_a_project_id_out_of_range_is_a_422(api, value):
    assert_envelope(api.get("/api/tasks", {"project": value}), 422, "VALIDATION")
    created = api.post("/api/tasks", {"title": "x", "project_id": value})
    assert_envelope(created, 422, "VALIDATION")
    task = api.post("/api/tasks", {"title": "kept"}).json()
    patched = api.patch(f"/api/tasks/{task['id']}", {"project_id": value})
    assert_envelope(patched, 422, "VALIDATION")
    assert list(Task.objects.values_list("title", "project_id")) == [("kept", None)]


@pytest.mark.parametrize(
    "content_type",
    ["multipart/form-data", "multipart/form-data; boundary=", "multipart/form-data; boundary=\x00"],
)
def test_a_malformed_multipart_body_with_the_session_is_a_400(api, content_type):
    response = api.client.post(
        "/api/tasks",
        data=b"--x\r\nnot a part",
        content_type=content_type,
        headers={"X-CSRFToken": api.csrf_token},
    )
    assert_envelope(response, 400, "BAD_REQUEST")
    assert not Task.objects.exists()
