"""Every unsafe API operation refuses a session request without the CSRF header, changing
nothing, and accepts it with the header. Operations are enumerated from the NinjaAPI, so new
ones are covered without editing this file."""

from __future__ import annotations

import pytest
from django.apps import apps
from django.core import serializers
from django.db import connection
from django.test import Client

from config.api import api as talorys_api
from talorys.accounts.services import api_token_create
from talorys.notifications import services as notification_services
from talorys.workspace import services
from tests.api.routes import (
    PUBLIC_API,
    UNSAFE_METHODS,
    api_operations,
    envelope_code,
    fill_path,
    plain_path,
    send,
)
from tests.conftest import OWNER_PASSWORD

UNSAFE_OPERATIONS = [
    (method, template)
    for method, template in api_operations(talorys_api)
    if method in UNSAFE_METHODS and (method, plain_path(template)) not in PUBLIC_API
]


def database_snapshot() -> dict[str, str]:
    # _base_manager: rows hidden by a default manager (soft deletion) count too.
    tables = set(connection.introspection.table_names())
    return {
        model._meta.label: serializers.serialize("json", model._base_manager.order_by("pk"))
        for model in apps.get_models()
        if model._meta.db_table in tables  # a model whose migration is still being written
    }


@pytest.fixture
def targets(owner) -> dict[str, int]:
    """Real rows for the path ids, so that an accepted request would really change something."""
    project = services.project_create(name="Garden")
    token, _raw = api_token_create(user=owner, name="backup script")
    return {
        "project_id": project.pk,
        "task_id": services.task_create(title="Water the roses", project_id=project.pk).pk,
        "note_id": services.note_create(title="Seeds", content="tomatoes").pk,
        "notification_id": notification_services.notification_create(title="Hello", body="hi").pk,
        "token_id": token.pk,
    }


def test_the_list_of_unsafe_operations_is_not_empty():
    assert ("POST", "/api/tasks") in UNSAFE_OPERATIONS
    assert ("DELETE", "/api/auth/tokens/{int:token_id}") in UNSAFE_OPERATIONS


@pytest.mark.parametrize(("method", "template"), UNSAFE_OPERATIONS, ids=lambda value: value)
def test_unsafe_operation_needs_the_csrf_header(api, targets, method, template):
    url = fill_path(template, targets)
    before = database_snapshot()

    refused = send(api.client, method, url)  # session cookie and csrftoken cookie, no header

    assert refused.status_code == 403, refused.content
    assert envelope_code(refused) == "FORBIDDEN"
    assert "CSRF" in refused.json()["error"]["message"]
    assert database_snapshot() == before

    accepted = send(api.client, method, url, headers={"X-CSRFToken": api.csrf_token})
    assert accepted.status_code not in (401, 403) or "CSRF" not in accepted.content.decode()


def test_a_wrong_csrf_token_is_refused_too(api, targets):
    response = send(api.client, "POST", "/api/tasks", headers={"X-CSRFToken": "x" * 64})
    assert response.status_code == 403
    assert envelope_code(response) == "FORBIDDEN"


def test_the_login_and_logout_pages_need_the_csrf_token(owner):
    client = Client(enforce_csrf_checks=True)
    response = client.post("/login/", {"username": "owner", "password": "whatever it is"})
    assert response.status_code == 403
    assert "_auth_user_id" not in client.session

    page = client.get("/login/")
    token = page.cookies["csrftoken"].value
    logged_in = client.post(
        "/login/", {"username": "owner", "password": OWNER_PASSWORD, "csrfmiddlewaretoken": token}
    )
    assert logged_in.status_code == 302
    assert client.post("/logout/").status_code == 403
    assert client.get("/").status_code == 200  # still logged in


def test_the_api_schema_views_refuse_unsafe_session_requests_without_the_header(api):
    for url in ("/api/openapi.json", "/api/docs"):
        response = send(api.client, "POST", url)
        assert response.status_code == 403, url
        assert envelope_code(response) == "FORBIDDEN"
