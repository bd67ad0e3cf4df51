"""The MCP server itself: the SDK's low-level ``Server`` with Talorys's tools and resources.

One server serves every client, over HTTP (``http.py``) and stdio (``talorys_mcp``). Who is
asking is ``current_caller``, a context variable the transport sets from the request's token
before the SDK handles it: the SDK runs each request's handlers in tasks started from the task
that set it, so they read that request's caller. Every handler reads the database through
``database_sync_to_async`` (a worker thread whose old connections are closed, as Channels does),
and fails only with the SDK's ``MCPError`` in our words (``_answered``, config/mcp/errors.py).
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any, TypeVar

import mcp.types as types
from channels.db import database_sync_to_async
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError

from config.mcp.access import Caller, caller_readmit, current_caller, tool_call
from config.mcp.errors import APP_ERROR, INTERNAL_ERROR, INTERNAL_MESSAGE, app_error_data
from config.mcp.resources import MIME_TYPE, resource_read, resources_list
from talorys.lib.errors import AppError, InternalError, classify_failure
from talorys.lib.tools import Permission, Tool, tools_for
from talorys.lib.validation import clip
from talorys.ops.selectors import app_version

log = logging.getLogger(__name__)

# Set by the stdio bridge, whose token was checked once at its start: every request then reads
# the token again, so a revocation or a change of scope applies at once, as over HTTP.
refresh_caller: ContextVar[bool] = ContextVar("talorys_mcp_refresh", default=False)

INSTRUCTIONS = (
    "Talorys is the owner's personal assistant: their tasks, notes, projects, memories and "
    "automations. Deleting anything is never done directly: it is proposed, and waits for the "
    "owner's approval in Talorys (/approvals/). Everything you change is recorded in the "
    "owner's change log with this token's name, and can be reverted there."
)
RESOURCE_NOT_FOUND = -32002  # the MCP specification's code for an unknown resource
URI_SHOWN = 200  # characters of an unknown resource's URI said back to the client

P = TypeVar("P")
R = TypeVar("R")
Handler = Callable[[ServerRequestContext[Any], P], Awaitable[R]]


def _answered(handler: Handler[P, R]) -> Handler[P, R]:
    """``handler``, whose failures reach the client as an ``MCPError`` in our words: the SDK
    would send any other exception's ``str()``. An ``AppError`` keeps its message (its code in
    ``data``); a database that cannot serve now says so (503's message); anything else is a
    bug, logged with its traceback here, and the client reads ``INTERNAL_MESSAGE``."""

    @functools.wraps(handler)
    async def answer(ctx: ServerRequestContext[Any], params: P) -> R:
        try:
            return await handler(ctx, params)
        except MCPError:
            raise
        except AppError as exc:
            raise MCPError(code=APP_ERROR, message=exc.message, data=app_error_data(exc)) from None
        except Exception as exc:
            failure = classify_failure(exc, message=INTERNAL_MESSAGE)
            code = APP_ERROR
            if isinstance(failure, InternalError):
                log.exception("The MCP handler %s failed", handler.__name__)
                code = INTERNAL_ERROR
            data = app_error_data(failure)
            raise MCPError(code=code, message=failure.message, data=data) from None

    return answer


async def _caller() -> Caller:
    caller = current_caller.get()
    if caller is not None and refresh_caller.get():
        # stdio: the token as it is now, and this request counted (over HTTP the gate did both).
        caller = await database_sync_to_async(caller_readmit)(caller)
    if caller is None:  # the transports set it before any request reaches a handler
        raise MCPError(code=types.INVALID_REQUEST, message="This API token is not valid any more.")
    return caller


def _mcp_tool(tool: Tool) -> types.Tool:
    spec = tool.spec()
    return types.Tool(
        name=spec["name"],
        description=spec["description"],
        input_schema=spec["parameters"],
        annotations=types.ToolAnnotations(
            read_only_hint=tool.permission == Permission.READ,
            destructive_hint=tool.permission == Permission.DESTRUCTIVE,
        ),
    )


async def _list_tools(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    caller = await _caller()  # tools/list shows the tools of the token's scope
    return types.ListToolsResult(tools=[_mcp_tool(t) for t in tools_for(caller.mode)])


async def _call_tool(
    ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    result = await database_sync_to_async(tool_call)(await _caller(), params.name, params.arguments)
    text = result.get("message") or json.dumps(result, ensure_ascii=False, default=str)
    return types.CallToolResult(
        content=[types.TextContent(text=text)],
        structured_content=json.loads(json.dumps(result, default=str)),
        is_error=not result.get("ok", False),
    )


async def _list_resources(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListResourcesResult:
    await _caller()
    return types.ListResourcesResult(resources=await database_sync_to_async(resources_list)())


async def _read_resource(
    ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
) -> types.ReadResourceResult:
    await _caller()
    text = await database_sync_to_async(resource_read)(str(params.uri))
    if text is None:
        shown = clip(str(params.uri), URI_SHOWN)
        raise MCPError(code=RESOURCE_NOT_FOUND, message=f"No resource {shown!r}.")
    return types.ReadResourceResult(
        contents=[types.TextResourceContents(uri=params.uri, mime_type=MIME_TYPE, text=text)]
    )


def server_build() -> Server[Any]:
    """A server with Talorys's handlers; every transport makes its own."""
    return Server(
        "talorys",
        version=app_version(),
        instructions=INSTRUCTIONS,
        on_list_tools=_answered(_list_tools),
        on_call_tool=_answered(_call_tool),
        on_list_resources=_answered(_list_resources),
        on_read_resource=_answered(_read_resource),
    )
