"""What an MCP client sees of the server beside its tools, with the official ``mcp`` client: the
server's version, absolute links when the public URL is set, and a 401 that names no OAuth."""

from __future__ import annotations

import httpx
import pytest
from asgiref.sync import async_to_sync
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from talorys.ops.selectors import app_version
from talorys.workspace.models import Task
from tests.mcp.test_mcp import http_session, payload, token

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_server_reports_talorys_version(live_server_url, owner):
    raw, _ = token(owner, "read")

    async def initialized() -> tuple[str, str]:
        client = create_mcp_http_client(headers={"Authorization": f"Bearer {raw}"})
        async with (
            client,
            streamable_http_client(f"{live_server_url}/mcp", http_client=client) as (read, write),
            ClientSession(read, write) as session,
        ):
            result = await session.initialize()
            return result.server_info.name, result.server_info.version

    name, version = async_to_sync(initialized)()
    assert (name, version) == ("talorys", app_version())
    assert version not in ("", "unknown")


def propose_a_delete(url: str, raw: str) -> dict:
    task = Task.objects.create(title="Old stamps")

    async def scenario() -> dict:
        async with http_session(url, raw) as session:
            return payload(await session.call_tool("delete_task", {"task_id": task.pk}))

    return async_to_sync(scenario)()


@pytest.mark.parametrize(
    "live_server_env", [{"TALORYS_PUBLIC_URL": "https://talorys.example.org/"}]
)
def test_links_are_absolute_on_the_public_url_when_it_is_set(live_server_url, owner):
    raw, _ = token(owner, "write")
    deleted = propose_a_delete(live_server_url, raw)
    assert deleted["approval_url"] == "https://talorys.example.org/approvals/"
    assert "https://talorys.example.org/approvals/" in deleted["message"]


@pytest.mark.parametrize(
    "live_server_env", [{"TALORYS_PUBLIC_URL": "", "CSRF_TRUSTED_ORIGINS": ""}]
)
def test_links_stay_paths_when_no_public_url_is_set(live_server_url, owner):
    raw, _ = token(owner, "write")
    deleted = propose_a_delete(live_server_url, raw)
    assert deleted["approval_url"] == "/approvals/"


def test_a_bad_token_gets_a_401_that_starts_no_oauth(live_server_url, owner):
    seen: list[tuple[str, str, int]] = []

    async def record(response: httpx.Response) -> None:
        seen.append((response.request.method, response.request.url.path, response.status_code))

    async def connect() -> None:
        client = create_mcp_http_client(headers={"Authorization": "Bearer tal_not-a-token"})
        client.event_hooks["response"].append(record)
        async with (
            client,
            streamable_http_client(f"{live_server_url}/mcp", http_client=client) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()

    with pytest.raises(Exception):  # noqa: B017 (the SDK's own error group for a refused request)
        async_to_sync(connect)()
    # The SDK client was refused and went looking for no OAuth metadata.
    assert seen == [("POST", "/mcp", 401)]

    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
    headers = {"Accept": "application/json, text/event-stream", "Authorization": "Bearer tal_x"}
    response = httpx.post(f"{live_server_url}/mcp", json=body, headers=headers, timeout=30)
    assert response.status_code == 401
    challenge = response.headers.get("www-authenticate", "")
    assert "resource_metadata" not in challenge and "authorization_uri" not in challenge
    error = response.json()["error"]
    assert error["code"] == "UNAUTHORIZED"
    assert "create one in Settings" in error["message"] and "not OAuth" in error["message"]
    # No OAuth metadata to discover either.
    for path in (
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-authorization-server",
    ):
        assert httpx.get(f"{live_server_url}{path}", timeout=30).status_code == 404
