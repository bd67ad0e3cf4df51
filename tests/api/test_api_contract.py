"""The API's schema says what its services check: a request the published schema allows is not
refused as invalid (422), and one it does not allow is refused. Each case is one schemathesis
found: the schema is read from /api/openapi.json and judged by schemathesis's own
validator, as its contract checks judge it (tests/api/test_api_fuzz.py runs them at random).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qsl

import pytest
import schemathesis

# (method, path, body): the path's id is a row of that kind, made first.
CASES = [
    # A number, or text made of digits, is not a date (pydantic read it as seconds since 1970).
    ("POST", "/api/tasks", {"title": "Pay rent", "due_at": 119}),
    ("POST", "/api/tasks", {"title": "Pay rent", "due_at": "1900"}),
    ("POST", "/api/tasks", {"title": "Pay rent", "due_at": "2026-03-14T09:00:00Z"}),
    ("POST", "/api/memories", {"text": "Likes tea", "valid_from": 0}),
    ("POST", "/api/memories", {"text": "Likes tea", "valid_to": 0.0}),
    ("POST", "/api/memories", {"text": "Likes tea", "valid_from": "2026-03-14"}),
    ("PATCH", "/api/memories/{memory_id}", {"valid_to": 0}),
    ("GET", "/api/tasks?due_before=1900", None),
    # A time of day is written with its digits 0-9 (pydantic reads no other digits).
    (
        "PATCH",
        "/api/settings",
        {"quiet_hours_start": "\u0661\u0662:00", "quiet_hours_end": "07:00"},
    ),
    ("PATCH", "/api/settings", {"quiet_hours_start": "22:00", "quiet_hours_end": "07:00"}),
    # A title or name made only of control characters is cleaned to nothing, and refused.
    ("POST", "/api/tasks", {"title": "\x83"}),
    ("POST", "/api/tasks", {"title": "\x83 milk"}),
    ("POST", "/api/memories", {"text": "\x9d\x9d"}),
    ("PATCH", "/api/memories/{memory_id}", {"text": "\x85"}),
    ("POST", "/api/auth/tokens", {"name": "\x9f"}),
    ("POST", "/api/automations", {"name": "\t\x8e", "kind": "reminder", "schedule": "{once}"}),
    # Left out keeps it; null is refused, and the schema has no null.
    ("PATCH", "/api/notes/{note_id}", {"title": None}),
    ("PATCH", "/api/projects/{project_id}", {"name": None}),
    ("PATCH", "/api/tasks/{task_id}", {"title": None}),
    ("PATCH", "/api/tasks/{task_id}", {"status": None}),
    ("PATCH", "/api/tasks/{task_id}", {"priority": None}),
    ("PATCH", "/api/automations/{automation_id}", {"name": None}),
    ("PATCH", "/api/automations/{automation_id}", {"schedule": None}),
    ("PATCH", "/api/memories/{memory_id}", {"text": None}),
    # null clears these, as the schema says.
    ("PATCH", "/api/tasks/{task_id}", {"due_at": None, "details": None}),
    ("PATCH", "/api/notes/{note_id}", {"content": None}),
    ("PATCH", "/api/automations/{automation_id}", {"message": None}),
]

ONCE = {"type": "once", "at": "2199-01-01T09:00:00Z"}


def _made(api) -> dict[str, int]:
    """One row of each kind the cases edit, by the path's first part."""
    bodies = {
        "tasks": {"title": "Buy milk"},
        "notes": {"title": "Shopping"},
        "projects": {"name": "Home"},
        "memories": {"text": "Lives in Paris"},
        "automations": {"name": "Water plants", "kind": "reminder", "schedule": ONCE},
    }
    ids = {}
    for kind, body in bodies.items():
        made = api.post(f"/api/{kind}", body)
        assert made.status_code in (200, 201), made.content
        ids[kind] = made.json()["id"]
    return ids


def _operation(schema: Any, method: str, path: str) -> Any:
    for result in schema.get_all_operations():
        operation = result.ok()
        if (operation.method.upper(), operation.path) == (method, path):
            return operation
    raise AssertionError(f"{method} {path} is not in the schema")


def _allowed(operation: Any, body: Any, query: dict[str, str]) -> bool:
    if body is not None and not all(part.is_valid(body) for part in operation.body):
        return False
    return all(p.is_valid(query[p.name]) for p in operation.query if p.name in query)


@pytest.mark.parametrize(("method", "path", "body"), CASES)
def test_the_schema_allows_what_the_services_accept(api, method, path, body):
    schema = schemathesis.openapi.from_dict(api.get("/api/openapi.json").json())
    ids = _made(api)
    url = re.sub(r"\{\w+\}", str(ids.get(path.split("/")[2], 0)), path)
    if isinstance(body, dict) and body.get("schedule") == "{once}":
        body = body | {"schedule": ONCE}
    path, _, query = path.partition("?")
    allowed = _allowed(_operation(schema, method, path), body, dict(parse_qsl(query)))
    response = getattr(api, method.lower())(url, body)
    assert response.status_code != 404, response.content
    refused = response.status_code == 422
    assert allowed != refused, (
        f"the schema {'allows' if allowed else 'refuses'} it, the API answered "
        f"{response.status_code}: {response.content[:300]!r}"
    )
