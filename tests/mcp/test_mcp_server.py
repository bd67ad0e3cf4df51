"""What an MCP client reads when a request fails (config/mcp/server.py, errors.py): our
messages, never Python's or pydantic's."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from mcp.shared.exceptions import MCPError

from config.mcp.errors import APP_ERROR, INTERNAL_ERROR, INTERNAL_MESSAGE
from config.mcp.server import _answered
from talorys.lib.errors import NotFound, RateLimited
from tests.mcp.test_mcp import http_session, token
from tests.mcp.test_mcp_gate import INTERNALS

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_client_reads_no_python_internals_from_a_bad_uri_or_bad_arguments(live_server_url, owner):
    raw, _ = token(owner, "write")

    async def scenario() -> list[str]:
        said = []
        async with http_session(live_server_url, raw) as session:
            # "²" passes str.isdigit and fails int(); the number is past a row id's range.
            for uri in ("talorys://notes/²", "talorys://notes/99999999999999999999"):
                with pytest.raises(MCPError) as refused:
                    await session.read_resource(uri)
                assert refused.value.error.code == -32002  # the specification's "not found"
                said.append(refused.value.error.message)
            for arguments in ({"title": 5}, {"title": ["a"], "colour": "red"}):
                result = await session.call_tool("create_task", arguments)
                assert result.is_error
                said.append(result.content[0].text)
        return said

    said = async_to_sync(scenario)()
    assert said[0] == "No resource 'talorys://notes/²'."
    for text in said:
        assert not any(word in text for word in INTERNALS), text
        assert "int()" not in text and "ValueError" not in text, text


async def _failing(ctx: Any, params: Any) -> Any:
    return None.missing  # type: ignore[attr-defined]  # a bug in a handler


def test_a_handlers_bug_is_logged_and_the_client_reads_our_message(caplog):
    with (
        caplog.at_level(logging.ERROR, logger="config.mcp.server"),
        pytest.raises(MCPError) as refused,
    ):
        async_to_sync(_answered(_failing))(None, None)
    assert refused.value.error.code == INTERNAL_ERROR
    assert refused.value.error.message == INTERNAL_MESSAGE
    assert refused.value.error.data == {"code": "INTERNAL"}
    assert "object has no attribute" not in str(refused.value.error)
    # The operator has the traceback.
    assert "object has no attribute 'missing'" in caplog.text


@pytest.mark.parametrize(
    ("error", "data"),
    [
        (NotFound("There is no note 3."), {"code": "NOT_FOUND"}),
        (RateLimited("Slow down.", retry_after=12), {"code": "RATE_LIMITED", "retry_after": 12}),
    ],
)
def test_an_app_error_keeps_its_message_and_names_its_code(error, data):
    async def refusing(ctx: Any, params: Any) -> Any:
        raise error

    with pytest.raises(MCPError) as refused:
        async_to_sync(_answered(refusing))(None, None)
    assert (refused.value.error.code, refused.value.error.message) == (APP_ERROR, error.message)
    assert refused.value.error.data == data
