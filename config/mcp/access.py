"""What an MCP client may do with its token, and doing it: the synchronous, ORM side.

The tools are the chat model's (``talorys/lib/tools.py``), run through the same executor
(``agent/executor.py``), so names, schemas, validation, caps, the limit on identical calls and
approvals are the chat's: a ``read`` token gets the executor's ``read`` mode (read tools only;
any other name is refused before it runs), a ``write`` token the ``chat`` mode (every tool, a
destructive one only ever proposed for the owner's approval). Changes are recorded as
``mcp:<token prefix>``, so the change log shows which token made them and the owner can revert
them there.

Every request a token makes counts: at most ``settings.MCP_REQUESTS_PER_MINUTE`` (60 unless
the operator says otherwise) a minute, whatever the method (initialize, tools/list, tools/call, resources/read...; over stdio, every request that
reaches a handler). The count is kept where the login throttle keeps its own
(talorys/accounts/counters.py): in Redis when it is configured, so every web process of the
install counts against the same minute, else in this process. It is counted before anything
else is done for the request, so a burst of concurrent requests lets exactly the limit through.

A turn's executor counts calls per turn; an MCP client has no turns, so each token gets one
executor per ``WINDOW`` (a minute): each tool's cap a minute, and the same call with the same
arguments at most twice a minute. Those executors live in the process where the calls arrive
(a web process, or the stdio bridge), so with several web processes those two finer limits are
per process; the request limit above bounds them all.
"""

from __future__ import annotations

import itertools
import threading
from contextvars import ContextVar
from dataclasses import dataclass
from time import monotonic
from typing import Any

from django.conf import settings

from agent.executor import ToolExecutor
from talorys.accounts.counters import counter_hit, counter_retry_after
from talorys.accounts.models import ApiToken
from talorys.accounts.services import api_token_authenticate
from talorys.lib.errors import RateLimited
from talorys.lib.tools import Mode, ToolContext, tools_for
from talorys.providers.base import ToolCall

# Who is asking, set by the transport from the request's token (config/mcp/http.py) or by the
# stdio bridge; here, not in server.py, so the transport reads it without importing the SDK.
current_caller: ContextVar[Caller | None] = ContextVar("talorys_mcp_caller", default=None)

WINDOW = 60  # seconds: the requests' window, and how long one executor (one "turn") serves
APPROVALS_PATH = "/approvals/"


@dataclass(frozen=True)
class Caller:
    """The token an MCP request came with: enough to act for it without reading it again."""

    token_id: int
    prefix: str
    scope: str

    @property
    def mode(self) -> Mode:
        return "chat" if self.scope == ApiToken.Scope.WRITE else "read"

    @property
    def source(self) -> str:
        """The actor recorded on every change this client makes."""
        return f"mcp:{self.prefix}"


def public_link(path: str) -> str:
    """A link in a tool's result: absolute on TALORYS_PUBLIC_URL when the operator set it (a
    client has no page to resolve a path against), else the path (docs/configuration.md)."""
    return f"{settings.TALORYS_PUBLIC_URL}{path}" if settings.TALORYS_PUBLIC_URL_GIVEN else path


def caller_for(raw: str) -> Caller | None:
    """The caller a raw ``tal_…`` secret stands for, or None (unknown, revoked, not the
    owner's). The token services compare hashes, so the check takes the same time whatever
    the secret."""
    token = api_token_authenticate(raw=raw)
    if token is None:
        return None
    return Caller(token_id=token.pk, prefix=token.prefix, scope=token.scope)


def request_admit(caller: Caller) -> None:
    """Count one request of this token against its minute, or raise RateLimited (counted even
    then: a client that keeps asking stays refused until its minute is over)."""
    key = f"mcp-requests:{caller.token_id}:{caller.prefix}"
    limit = settings.MCP_REQUESTS_PER_MINUTE
    if counter_hit(key, window=WINDOW) > limit:
        raise RateLimited(
            f"This token has made its {limit} MCP requests for this minute. "
            "Wait a minute and try again.",
            retry_after=counter_retry_after(key, window=WINDOW),
        )


def caller_admit(raw: str) -> Caller | None:
    """The caller of an HTTP request (``caller_for``), its request counted (``request_admit``)."""
    caller = caller_for(raw)
    if caller is not None:
        request_admit(caller)
    return caller


def caller_readmit(caller: Caller) -> Caller | None:
    """The stdio bridge's caller at each request, its request counted: the secret was checked
    once, at its start, so the token is read as it stands now (revoked: None; its scope changed
    in the admin: the new scope)."""
    token = ApiToken.objects.filter(pk=caller.token_id, revoked_at__isnull=True).first()
    if token is None:
        return None
    refreshed = Caller(token_id=token.pk, prefix=token.prefix, scope=token.scope)
    request_admit(refreshed)
    return refreshed


@dataclass
class _Window:
    started: float
    executor: ToolExecutor
    # One token's calls queue: the executor's counters are not made for two threads at once.
    lock: threading.Lock


class _Windows:
    """One executor per token per window, made afresh when the window is over."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        # By id and prefix: a token's id may be taken again by a later token (SQLite reuses the
        # highest id once it is deleted), its random prefix not.
        self._windows: dict[tuple[int, str], _Window] = {}

    def window(self, caller: Caller) -> _Window:
        now = monotonic()
        with self._lock:
            key = (caller.token_id, caller.prefix)
            window = self._windows.get(key)
            if (
                window is None
                or now - window.started >= WINDOW
                or window.executor.ctx.mode != caller.mode
            ):
                ctx = ToolContext(mode=caller.mode, source=caller.source)
                # Its budget is the request limit's, which refuses first unless one's minute
                # started before the other's.
                budget = settings.MCP_REQUESTS_PER_MINUTE
                executor = ToolExecutor(ctx=ctx, max_tool_calls=budget)
                # Forget the tokens whose window is over, so the table stays as small as the
                # number of tokens in use this minute.
                self._windows = {k: w for k, w in self._windows.items() if now - w.started < WINDOW}
                window = _Window(started=now, executor=executor, lock=threading.Lock())
                self._windows[key] = window
            return window

    def clear(self) -> None:
        """Start every token's window afresh (the tests' clean slate)."""
        with self._lock:
            self._windows.clear()


windows = _Windows()
_call_ids = itertools.count(1)


def tool_call(caller: Caller, name: str, arguments: dict[str, Any] | None) -> dict[str, Any]:
    """Run one tool call for the client and return what it reads: the executor's result, with
    a pending approval spelled out (the tool did not run; the owner decides on /approvals/)."""
    if name not in {tool.name for tool in tools_for(caller.mode)}:
        # The executor refuses it too (the read mode has no such tool); this says why.
        message = f"The tool {name!r} is not offered to this token"
        if caller.mode == "read":
            message += ": it may only read. Use a token with scope 'write' to change things"
        return {"ok": False, "error": {"code": "TOOL_NOT_ALLOWED", "message": message + "."}}
    window = windows.window(caller)
    call = ToolCall(id=f"mcp-{next(_call_ids)}", name=name, arguments=arguments or {})
    with window.lock:
        outcome = window.executor.execute(call)
    result = dict(outcome.result)
    if not outcome.ok and result["error"]["code"] == "TOOL_BUDGET_EXHAUSTED":
        # The executor speaks of a turn; a client has a minute.
        result["error"] = {
            "code": "TOOL_BUDGET_EXHAUSTED",
            "message": f"This token has made its {window.executor.max_tool_calls} tool calls "
            "for this minute. Wait a minute and try again.",
        }
    if result.get("status") == "awaiting_owner_approval":
        link = public_link(APPROVALS_PATH)
        result["approval_url"] = link
        result["message"] = (
            f"Waiting for the owner's approval (#{result['action_id']}): nothing has changed "
            f"yet. The owner decides at {link}."
        )
    return result
