"""The MCP server's rules in process: limits per token, the token checked on every request, the
change log's actor, and the session manager started without an ASGI lifespan (config/mcp/)."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from asgiref.sync import async_to_sync
from mcp.shared.exceptions import MCPError

from config.asgi import application
from config.mcp import access, http
from config.mcp.access import Caller, caller_for, tool_call
from talorys.accounts.services import api_token_create, api_token_revoke
from talorys.workspace.models import Task
from tests.mcp.test_mcp import http_session

# A live daphne's limit in the shared-limit test below (its own settings, from the environment).
LIVE_LIMIT = 10


@pytest.fixture(autouse=True)
def _fresh_windows():
    access.windows.clear()
    yield
    access.windows.clear()


@pytest.fixture
def live_server_env(redis_url_for_tests) -> dict[str, str]:
    """Live daphnes on the test Redis (tests/agent/redis_live_settings.py), as the web processes
    of one install share it, with a small limit to reach."""
    return {
        "DJANGO_SETTINGS_MODULE": "tests.agent.redis_live_settings",
        "TALORYS_TEST_LIVE_REDIS_URL": redis_url_for_tests,
        "TALORYS_MCP_REQUESTS_PER_MINUTE": str(LIVE_LIMIT),
    }


def make_caller(owner, scope: str) -> tuple[Caller, str]:
    token, raw = api_token_create(user=owner, name=scope, scope=scope)
    caller = caller_for(raw)
    assert caller is not None
    return caller, raw


def error_code(result: dict[str, Any]) -> str | None:
    return None if result["ok"] else result["error"]["code"]


def test_a_tokens_calls_a_minute_are_limited_and_the_next_minute_starts_afresh(
    owner, monkeypatch, settings
):
    settings.MCP_REQUESTS_PER_MINUTE = 3
    clock = [1000.0]
    monkeypatch.setattr(access, "monotonic", lambda: clock[0])
    caller, _ = make_caller(owner, "write")
    other, _ = make_caller(owner, "read")

    words = ["milk", "bread", "eggs", "tea"]
    codes = [error_code(tool_call(caller, "search_tasks", {"query": w})) for w in words]
    assert codes == [None, None, None, "TOOL_BUDGET_EXHAUSTED"]
    spent = tool_call(caller, "list_tasks", {})["error"]["message"]
    assert (
        spent
        == "This token has made its 3 tool calls for this minute. Wait a minute and try again."
    )
    # Another token has its own minute.
    assert error_code(tool_call(other, "list_tasks", {})) is None

    clock[0] += access.WINDOW
    assert error_code(tool_call(caller, "list_tasks", {})) is None


def test_the_same_call_is_refused_the_third_time_in_a_minute(owner):
    caller, _ = make_caller(owner, "read")
    codes = [error_code(tool_call(caller, "search_tasks", {"query": "milk"})) for _ in range(3)]
    assert codes == [None, None, "DUPLICATE_CALL"]


def test_bad_arguments_are_the_executors_answer(owner):
    caller, _ = make_caller(owner, "write")
    result = tool_call(caller, "create_task", {"title": "x", "colour": "red"})
    assert error_code(result) == "INVALID_ARGUMENTS"
    assert error_code(tool_call(caller, "no_such_tool", {})) == "TOOL_NOT_ALLOWED"


def test_a_change_over_mcp_is_in_the_change_log_by_its_token(owner, api):
    caller, _ = make_caller(owner, "write")
    made = tool_call(caller, "create_task", {"title": "Call the plumber"})
    assert made["ok"]

    listed = api.get("/api/changes").json()["items"]
    assert [(c["title"], c["source"]) for c in listed] == [
        ("Call the plumber", f"mcp:{caller.prefix}")
    ]
    page = api.client.get("/changes/").content.decode()
    assert f"by an MCP client (token {caller.prefix}…)" in page


def _post(raw: str) -> Any:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {
        "authorization": f"Bearer {raw}",
        "accept": "application/json, text/event-stream",
    }
    transport = httpx.ASGITransport(app=application)
    return httpx.AsyncClient(transport=transport, base_url="http://testserver").post(
        "/mcp", json=body, headers=headers
    )


@pytest.mark.django_db(transaction=True)
def test_a_revoked_token_is_refused_at_its_next_request(owner):
    token, raw = api_token_create(user=owner, name="laptop", scope="read")

    async def before_and_after() -> tuple[int, int]:
        first = await _post(raw)
        await asyncio.to_thread(api_token_revoke, user=owner, token_id=token.pk)
        return first.status_code, (await _post(raw)).status_code

    assert async_to_sync(before_and_after)() == (200, 401)


@pytest.mark.django_db(transaction=True)
def test_the_session_manager_starts_on_the_first_request_and_again_if_it_stopped(owner):
    _token, raw = api_token_create(user=owner, name="laptop", scope="read")

    async def requests() -> list[Any]:
        loop = asyncio.get_running_loop()
        assert http._runs.of(loop) is None
        answers = [(await _post(raw)).status_code]
        first = http._runs.of(loop)
        assert not first.task.done()  # it outlives the request
        answers.append((await _post(raw)).status_code)
        assert http._runs.of(loop) is first  # one manager for the loop
        first.task.cancel()
        await asyncio.sleep(0)
        answers.append((await _post(raw)).status_code)
        assert http._runs.of(loop) is not first
        return answers

    assert async_to_sync(requests)() == [200, 200, 200]


@pytest.mark.django_db(transaction=True)
def test_a_body_over_the_limit_is_413_before_the_token_is_read(owner, settings):
    settings.MAX_BODY_BYTES = 1000
    _token, raw = api_token_create(user=owner, name="laptop", scope="write")

    async def big() -> int:
        transport = httpx.ASGITransport(app=application)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            response = await client.post(
                "/mcp", content=b"x" * 5000, headers={"authorization": f"Bearer {raw}"}
            )
            return response.status_code

    assert async_to_sync(big)() == 413


def test_the_owner_reverts_a_change_made_over_mcp(owner, api):
    caller, _ = make_caller(owner, "write")
    made = tool_call(caller, "create_task", {"title": "Renew the passport"})
    change = api.get("/api/changes").json()["items"][0]
    assert change["source"] == f"mcp:{caller.prefix}"

    assert api.post(f"/api/changes/{change['id']}/revert").status_code == 200
    assert not Task.objects.live().filter(pk=made["task"]["id"]).exists()


@pytest.mark.django_db(transaction=True)
def test_two_web_processes_count_a_tokens_requests_together(live_servers, owner):
    """Each process alone would answer all 20 listings; together they answer the token's
    LIVE_LIMIT requests a minute, its sessions' opening requests included, then refuse."""
    _token, raw = api_token_create(user=owner, name="agent", scope="read")
    first, second = live_servers(2)

    async def alternate() -> tuple[list[int], list[list[MCPError]]]:
        answered, refused = [0, 0], [[], []]
        async with http_session(first.url, raw) as one, http_session(second.url, raw) as two:
            for turn in range(10):
                for index, session in enumerate((one, two)):
                    try:
                        if turn % 2:
                            await session.list_tools()
                        else:
                            await session.read_resource("talorys://memories")
                        answered[index] += 1
                    except MCPError as exc:
                        refused[index].append(exc)
        return answered, refused

    answered, refused = async_to_sync(alternate)()
    # Each session opened with initialize and its "initialized" notification: 4 of the 10.
    assert sum(answered) <= LIVE_LIMIT - 4
    assert refused[0] and refused[1]  # both processes refuse the token
    for exc in refused[0] + refused[1]:
        assert exc.error.data["code"] == "RATE_LIMITED"
        assert f"its {LIVE_LIMIT} MCP requests for this minute" in exc.error.message
