"""What every /mcp request passes before the SDK (config/mcp/gate.py): Host and Origin as the
rest of the app checks them, the token's requests a minute whatever the method, and a body the
SDK can read, refused in our words. In process, through the ASGI application."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from asgiref.sync import async_to_sync

from config.asgi import application
from talorys.accounts.services import api_token_create
from talorys.workspace.models import Task

pytestmark = pytest.mark.django_db(transaction=True)

ACCEPT = "application/json, text/event-stream"
# What a client must never read: Python's and pydantic's own words.
INTERNALS = ("Traceback", "Error:", "errors.pydantic.dev", "pydantic", "object has no attribute")


def rpc(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 7, "method": method, "params": params or {}}


def post(raw: str, body: Any, **headers: str) -> httpx.Response:
    """One POST to /mcp; ``body`` as JSON, or bytes sent as they are."""

    async def send() -> httpx.Response:
        transport = httpx.ASGITransport(app=application)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            content = body if isinstance(body, bytes) else json.dumps(body).encode()
            sent = {"authorization": f"Bearer {raw}", "accept": ACCEPT}
            sent |= {"content-type": "application/json"} | headers
            return await client.post("/mcp", content=content, headers=sent)

    return async_to_sync(send)()


@pytest.fixture
def write_token(owner) -> str:
    return api_token_create(user=owner, name="agent", scope="write")[1]


def create(title: str) -> dict[str, Any]:
    return rpc("tools/call", {"name": "create_task", "arguments": {"title": title}})


def test_a_foreign_origin_is_403_and_changes_nothing(write_token):
    refused = post(write_token, create("From evil"), origin="https://evil.example")
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "FORBIDDEN"
    # Another port of the same host is another origin (a dev server, another local app).
    assert (
        post(write_token, create("From 8001"), origin="http://testserver:8001").status_code == 403
    )
    assert not Task.objects.exists()


def test_the_apps_own_origin_a_trusted_one_and_no_origin_at_all_are_served(write_token, settings):
    settings.CSRF_TRUSTED_ORIGINS = ["https://talorys.example.com"]
    assert post(write_token, create("Own"), origin="http://testserver").status_code == 200
    trusted = post(write_token, create("Trusted"), origin="https://talorys.example.com")
    assert trusted.status_code == 200
    assert post(write_token, create("CLI")).status_code == 200  # MCP clients send no Origin
    assert set(Task.objects.values_list("title", flat=True)) == {"Own", "Trusted", "CLI"}


def test_a_host_outside_allowed_hosts_is_400_and_changes_nothing(write_token):
    refused = post(write_token, create("Rebound"), host="attacker.example")
    assert refused.status_code == 400
    assert refused.json()["error"]["code"] == "BAD_REQUEST"
    assert not Task.objects.exists()


def test_every_method_counts_toward_the_tokens_requests_a_minute(write_token, settings):
    settings.MCP_REQUESTS_PER_MINUTE = 4
    calls = [
        rpc("tools/list"),
        rpc("resources/list"),
        rpc("resources/read", {"uri": "talorys://memories"}),
        create("Fourth"),
    ]
    assert [post(write_token, call).status_code for call in calls] == [200, 200, 200, 200]

    for refused_call in (rpc("tools/list"), rpc("resources/read", {"uri": "talorys://memories"})):
        refused = post(write_token, refused_call)
        assert refused.status_code == 429
        assert 1 <= int(refused.headers["retry-after"]) <= 60
        error = refused.json()["error"]  # JSON-RPC's shape: the client shows its message
        assert error["data"]["code"] == "RATE_LIMITED"
        assert error["message"] == (
            "This token has made its 4 MCP requests for this minute. Wait a minute and try again."
        )
    assert post(write_token, create("Fifth")).status_code == 429
    assert list(Task.objects.values_list("title", flat=True)) == ["Fourth"]


def test_another_token_has_its_own_minute(owner, write_token, settings):
    settings.MCP_REQUESTS_PER_MINUTE = 1
    other = api_token_create(user=owner, name="other", scope="read")[1]
    assert post(write_token, rpc("tools/list")).status_code == 200
    assert post(write_token, rpc("tools/list")).status_code == 429
    assert post(other, rpc("tools/list")).status_code == 200


@pytest.mark.parametrize(
    "body",
    [
        b"nonsense",
        b'{"jsonrpc": "2.0", "id": 1',
        b'{"jsonrpc": "2.0", "id": 1}',
        b'{"jsonrpc": "1.0", "id": 1, "method": "tools/list"}',
        b'[{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}]',
    ],
)
def test_a_body_that_is_no_json_rpc_message_is_400_in_our_words(write_token, body):
    refused = post(write_token, body)
    assert refused.status_code == 400
    error = refused.json()["error"]
    assert error["message"] in (
        "The request body is not valid JSON.",
        "The request body is not a JSON-RPC 2.0 message: send one request or notification, "
        'an object with "jsonrpc": "2.0" and a "method".',
    )
    assert not any(word in refused.text for word in INTERNALS), refused.text
