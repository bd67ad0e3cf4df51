"""``/mcp``: the MCP server over Streamable HTTP, in front of Django in the ASGI router.

Only a Bearer API token gets in (``Authorization: Bearer tal_…``); no session, no cookie.
Every request passes ``mcp_gate`` (config/mcp/gate.py: Host and Origin, POST only, the token
and its requests a minute, a readable body) before the SDK sees it. The token is checked on
every request (the server is stateless: each JSON-RPC request is one POST), so a revoked token
stops at its next call.

The SDK's session manager needs its ``run()`` context entered, for the life of the server, on
the loop that serves the requests: it holds the task group each request's server runs in, and
is normally entered from the ASGI lifespan. Daphne sends no lifespan events, so ``_Runs``
enters it itself: the first request on a loop starts a task on that loop that enters ``run()``
and then waits until the loop ends, and every request waits until it has. The task is made in
an empty context, so it keeps no request's caller; a request's own tasks (which the manager
starts from the request) inherit that request's. Should the task ever end (the manager failed),
the next request starts a new manager: a manager cannot be run twice. The loop is the key, so a
test or another server with its own loop gets its own manager.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from typing import TYPE_CHECKING, Any

from config.mcp.access import current_caller
from config.mcp.gate import mcp_gate

if TYPE_CHECKING:
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

log = logging.getLogger(__name__)

PATHS = frozenset({"/mcp", "/mcp/"})


class _Run:
    """One session manager, entered on its loop by a task that lives as long as the loop."""

    def __init__(self) -> None:
        # The SDK and its web stack (about 50 MB in each web process) load at the first /mcp
        # request, not in every process of an install that never uses MCP.
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

        from config.mcp.server import server_build

        self.manager = StreamableHTTPSessionManager(
            app=server_build(), stateless=True, json_response=True
        )
        self.ready = asyncio.Event()
        self.loop = asyncio.get_running_loop()
        self.task = self.loop.create_task(
            self._serve(), name="talorys-mcp-session-manager", context=contextvars.Context()
        )

    async def _serve(self) -> None:
        try:
            async with self.manager.run():
                self.ready.set()
                await asyncio.Event().wait()  # until the loop ends and cancels it
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("The MCP session manager stopped; the next request starts another.")

    async def started(self) -> StreamableHTTPSessionManager:
        if self.ready.is_set():
            return self.manager
        waiting = asyncio.ensure_future(self.ready.wait())
        await asyncio.wait({waiting, self.task}, return_when=asyncio.FIRST_COMPLETED)
        if not self.ready.is_set():
            waiting.cancel()
            raise RuntimeError("The MCP session manager did not start.")
        return self.manager


class _Runs:
    """The run of each loop that serves requests; those of closed loops are let go."""

    def __init__(self) -> None:
        self._runs: dict[int, _Run] = {}

    def of(self, loop: asyncio.AbstractEventLoop) -> _Run | None:
        run = self._runs.get(id(loop))
        return run if run is not None and run.loop is loop else None

    async def manager(self) -> StreamableHTTPSessionManager:
        loop = asyncio.get_running_loop()
        run = self.of(loop)
        if run is None or run.task.done():
            # No await between the check and the store: two first requests make one run.
            self._runs = {k: r for k, r in self._runs.items() if not r.loop.is_closed()}
            run = self._runs[id(loop)] = _Run()
        return await run.started()


_runs = _Runs()


async def mcp_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """The ASGI app for ``/mcp``: the gate, then the SDK's Streamable HTTP transport."""
    admitted = await mcp_gate(scope, receive, send)
    if admitted is None:
        return
    caller, replay = admitted
    manager = await _runs.manager()
    reset = current_caller.set(caller)
    try:
        await manager.handle_request(scope, replay, send)
    finally:
        current_caller.reset(reset)


class McpRouter:
    """Sends ``/mcp`` to the MCP server and every other path to ``app`` (Django)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope.get("path") in PATHS:
            await mcp_app(scope, receive, send)
        else:
            await self.app(scope, receive, send)
