"""The MCP server with the official ``mcp`` client: Streamable HTTP against a live daphne, and
the stdio bridge launched as a command (config/mcp/, talorys_mcp)."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from asgiref.sync import async_to_sync, sync_to_async
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

from approvals.models import ApprovalEvent, PendingAction
from memory.services.memories import memory_create_unchecked
from talorys.accounts.services import api_token_create, api_token_revoke
from talorys.history.models import Change
from talorys.notifications.models import Notification
from talorys.workspace.models import Task
from talorys.workspace.services.notes import note_create
from tests.conftest import ROOT, _live_env

pytestmark = pytest.mark.django_db(transaction=True)

READ_TOOLS = {
    "list_automation_runs",
    "list_automations",
    "list_files",
    "list_memories",
    "list_notes",
    "list_notifications",
    "list_projects",
    "list_tasks",
    "read_file",
    "read_note",
    "search",
    "search_files",
    "search_notes",
    "search_tasks",
}


def token(owner, scope: str) -> tuple[str, str]:
    made, raw = api_token_create(user=owner, name=f"mcp {scope}", scope=scope)
    return raw, made.prefix


@asynccontextmanager
async def http_session(url: str, raw: str) -> AsyncIterator[ClientSession]:
    client = create_mcp_http_client(headers={"Authorization": f"Bearer {raw}"})
    async with (
        client,
        streamable_http_client(f"{url}/mcp", http_client=client) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


def payload(result: Any) -> dict[str, Any]:
    return result.structured_content or json.loads(result.content[0].text)


def test_a_write_token_creates_finds_and_proposes_a_delete(live_server_url, owner, api):
    raw, prefix = token(owner, "write")

    async def scenario() -> tuple[set[str], dict, dict, dict]:
        async with http_session(live_server_url, raw) as session:
            names = {tool.name for tool in (await session.list_tools()).tools}
            made = payload(await session.call_tool("create_task", {"title": "Buy MCP stamps"}))
            found = payload(await session.call_tool("search_tasks", {"query": "stamps"}))
            task_id = made["task"]["id"]
            deleted = await session.call_tool("delete_task", {"task_id": task_id})
            assert not deleted.is_error
            return names, made, found, payload(deleted)

    names, made, found, deleted = async_to_sync(scenario)()
    assert names >= READ_TOOLS
    assert {"create_task", "update_task", "delete_task", "remember"} <= names
    assert made["ok"] and made["task"]["title"] == "Buy MCP stamps"
    assert [t["id"] for t in found["tasks"]] == [made["task"]["id"]]
    # The delete did not run: it waits for the owner, as in chat.
    assert deleted["status"] == "awaiting_owner_approval"
    assert deleted["approval_url"] == "/approvals/"
    action = PendingAction.objects.get(pk=deleted["action_id"])
    assert action.status == PendingAction.Status.PENDING
    assert Task.objects.live().filter(pk=made["task"]["id"]).exists()
    # Proposed by this token, and the owner is told, as for any approval.
    proposed = ApprovalEvent.objects.get(action=action, kind=ApprovalEvent.Kind.PROPOSED)
    assert proposed.actor == f"mcp:{prefix}"
    # The card, the API and the notification say which client asked, by its token's name.
    assert action.proposed_by == "the MCP client “mcp write”"
    (told,) = Notification.objects.filter(kind=Notification.Kind.APPROVAL)
    assert told.body.startswith("Proposed by the MCP client “mcp write”.")
    (listed_action,) = api.get("/api/approvals").json()["items"]
    assert listed_action["proposed_by"] == "the MCP client “mcp write”"
    page = api.get("/approvals/").content.decode()
    assert "Proposed by the MCP client “mcp write”" in page
    # The change made over MCP is in the change log with the token's actor.
    change = Change.objects.get(kind="task", object_id=made["task"]["id"], action="create")
    assert change.source == f"mcp:{prefix}"
    listed = api.get("/api/changes").json()
    assert any(item["source"] == f"mcp:{prefix}" for item in listed["items"]), listed

    assert api.post(f"/api/approvals/{action.pk}/approve").status_code == 200
    action.refresh_from_db()
    assert action.status == PendingAction.Status.COMMITTED
    assert not Task.objects.live().filter(pk=made["task"]["id"]).exists()


def test_a_read_token_sees_and_calls_read_tools_only(live_server_url, owner):
    raw, _ = token(owner, "read")
    memory_create_unchecked(text="The owner's cat is called Miso.")
    note = note_create(title="Garden plan", content="Tomatoes by the wall.")

    async def scenario() -> tuple[set[str], Any, Any, list[str], list[str]]:
        async with http_session(live_server_url, raw) as session:
            names = {tool.name for tool in (await session.list_tools()).tools}
            refused = await session.call_tool("create_task", {"title": "Sneaky"})
            listed = await session.call_tool("list_tasks", {})
            uris = [str(r.uri) for r in (await session.list_resources()).resources]
            memories = (await session.read_resource("talorys://memories")).contents[0].text
            texts = [memories, (await session.read_resource(uris[1])).contents[0].text]
            with pytest.raises(MCPError):
                await session.read_resource("talorys://notes/999999")
            return names, refused, listed, uris, texts

    names, refused, listed, uris, (memories, garden) = async_to_sync(scenario)()
    assert names == READ_TOOLS
    assert refused.is_error
    assert payload(refused)["error"]["code"] == "TOOL_NOT_ALLOWED"
    assert not Task.objects.filter(title="Sneaky").exists()
    assert not listed.is_error
    assert uris == ["talorys://memories", f"talorys://notes/{note.pk}"]
    assert "Miso" in memories
    assert garden == "# Garden plan\n\nTomatoes by the wall.\n"


@pytest.mark.parametrize("header", [None, "Bearer tal_not-a-token", "Basic b3duZXI6cHc="])
def test_mcp_without_a_valid_token_is_401(live_server_url, header):
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if header:
        headers["Authorization"] = header
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    response = httpx.post(f"{live_server_url}/mcp", json=body, headers=headers, timeout=30)
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith("Bearer")
    assert response.json()["error"]["code"] == "UNAUTHORIZED"


@pytest.mark.subprocess
def test_the_stdio_bridge_answers_the_same(needs_postgres, owner, tmp_path):
    """The bridge is its own process on the test database, as a live server is."""
    made, raw = api_token_create(user=owner, name="desktop", scope="read")
    Task.objects.create(title="Water the plants")
    env = _live_env(tmp_path, {"TALORYS_MCP_TOKEN": raw})
    params = StdioServerParameters(
        command=sys.executable, args=["manage.py", "talorys_mcp"], env=env, cwd=ROOT
    )

    async def scenario() -> tuple[set[str], Any, str]:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            names = {tool.name for tool in (await session.list_tools()).tools}
            listed = await session.call_tool("list_tasks", {})
            # Revoked while the bridge runs: its next request is refused.
            await sync_to_async(api_token_revoke)(user=owner, token_id=made.pk)
            with pytest.raises(MCPError) as refused:
                await session.call_tool("list_tasks", {})
            return names, listed, str(refused.value)

    names, listed, refused = async_to_sync(scenario)()
    assert names == READ_TOOLS
    assert [t["title"] for t in payload(listed)["tasks"]] == ["Water the plants"]
    assert "not valid any more" in refused


@pytest.mark.parametrize("method", ["GET", "DELETE"])
def test_mcp_answers_post_only_and_opens_no_stream(live_server_url, owner, method):
    """The server is stateless: it has nothing to send on a GET stream and no session to end."""
    raw, _ = token(owner, "read")
    headers = {"Authorization": f"Bearer {raw}", "Accept": "text/event-stream"}
    with httpx.stream(method, f"{live_server_url}/mcp", headers=headers, timeout=30) as response:
        assert response.status_code == 405
        assert response.headers["allow"] == "POST"
        assert response.headers["content-type"] == "application/json"
        assert response.read()  # the whole answer: no stream left open


@pytest.mark.subprocess
def test_the_stdio_bridge_counts_the_tokens_requests_too(needs_postgres, owner, tmp_path):
    _made, raw = api_token_create(user=owner, name="desktop", scope="read")
    env = _live_env(tmp_path, {"TALORYS_MCP_TOKEN": raw, "TALORYS_MCP_REQUESTS_PER_MINUTE": "2"})
    params = StdioServerParameters(
        command=sys.executable, args=["manage.py", "talorys_mcp"], env=env, cwd=ROOT
    )

    async def scenario() -> MCPError:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            await session.list_tools()
            await session.read_resource("talorys://memories")
            with pytest.raises(MCPError) as refused:
                await session.list_tools()
            return refused.value

    refused = async_to_sync(scenario)()
    assert refused.error.data["code"] == "RATE_LIMITED"
    assert "its 2 MCP requests for this minute" in refused.error.message
