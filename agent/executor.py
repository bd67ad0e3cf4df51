"""The tool executor: the only way a model's tool call reaches the owner's data.

A fresh executor serves one turn. For every call it looks the tool up *for the turn's mode*
(a scheduled run cannot reach a write tool by naming it), validates the arguments, enforces the
turn's tool budget, the tool's own cap and the limit on identical repeated calls, then runs the
tool. Whatever goes wrong becomes a structured result the model can read and recover from;
nothing raises out of ``execute``.

Destructive tools never run during a turn: they go to ``_propose``: prepare -> pending action ->
"awaiting owner approval" (approvals/).

Synchronous, with ORM access inside: the async runner calls ``execute`` through sync_to_async.
So whether the owner is watching the turn (``watched``, asked by the runner before each call,
``owner_watching``) is asked in async code first; a proposal made while they watch only records
its notification (approvals/telling.py).
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, NotRequired, TypedDict

from pydantic import ValidationError

from approvals.services import pending_action_propose
from talorys.lib.errors import AppError
from talorys.lib.tools import (
    Permission,
    Tool,
    ToolArgs,
    ToolContext,
    ToolError,
    get_tool,
    tools_for,
)
from talorys.lib.validation import clip
from talorys.providers.base import ToolCall

logger = logging.getLogger(__name__)

ActivityStatus = Literal["ok", "error", "refused", "awaiting_approval"]


class ToolActivity(TypedDict):
    """What the owner sees of one tool call: streamed as a ``tool`` event, saved on the reply."""

    tool: str
    args: Any  # the arguments, each value shortened; the raw text when they were not JSON
    status: ActivityStatus
    summary: str
    action_id: NotRequired[int]  # awaiting_approval: the pending action the owner decides on


ACTIVITY_TEXT = 200  # chars of any one argument value kept in the activity record
MAX_ERRORS_SHOWN = 5


@dataclass
class ToolOutcome:
    call_id: str
    name: str
    result: dict[str, Any]  # what the model reads, as the tool message
    activity: ToolActivity

    @property
    def ok(self) -> bool:
        return bool(self.result["ok"])

    @property
    def content(self) -> str:
        """The result as the tool message's content."""
        return json.dumps(self.result, ensure_ascii=False, default=str)


class _Refused(AppError):
    """The executor declines the call (mode, cap, budget, repetition); nothing ran."""


class ToolExecutor:
    def __init__(
        self,
        *,
        ctx: ToolContext,
        max_tool_calls: int,
        max_identical_calls: int = 2,
        watched: Callable[[], Awaitable[bool]] | None = None,
    ) -> None:
        self.ctx = ctx
        # Whether a page of the owner's follows the turn now (agent/live/ready.py page_follows);
        # None: nobody of theirs can (a scheduled run, a /v1 client's turn).
        self.watched = watched
        self.owner_watching = False
        self.max_tool_calls = max_tool_calls
        self.max_identical_calls = max_identical_calls
        self.calls_made = 0
        self._per_tool: Counter[str] = Counter()
        self._identical: Counter[tuple[str, str]] = Counter()

    @property
    def budget_left(self) -> int:
        return max(0, self.max_tool_calls - self.calls_made)

    def specs(self) -> list[dict[str, Any]]:
        """The tools the model may call now: those of the mode, none once the budget is spent."""
        if not self.budget_left:
            return []
        return [tool.spec() for tool in tools_for(self.ctx.mode)]

    def execute(self, call: ToolCall) -> ToolOutcome:
        shown_args: Any = call.arguments if call.arguments is not None else call.raw_arguments
        try:
            tool, args = self._admit(call)
            shown_args = args.model_dump(mode="json", exclude_unset=True)
            ctx = self.ctx.for_call()  # reads the owner's zone afresh, at most once
            if tool.permission == Permission.DESTRUCTIVE:
                result = self._propose(tool, args, ctx)
            else:
                result = tool.run(args, ctx)
        except _Refused as exc:
            return self._failure(call, shown_args, "refused", exc.code, exc.message)
        except AppError as exc:  # a ToolError too: a failure the model may recover from
            return self._failure(call, shown_args, "error", exc.code, exc.message)
        except ValidationError as exc:
            return self._failure(call, shown_args, "error", "INVALID_ARGUMENTS", _explain(exc))
        except Exception:
            # The traceback is for the operator's log; the model only learns that it failed.
            logger.exception("Tool %s failed (call %s)", call.name, call.id)
            return self._failure(
                call,
                shown_args,
                "error",
                "TOOL_FAILED",
                "The tool failed unexpectedly. Do not retry it; tell the owner it did not work.",
            )
        activity = _activity(call.name, shown_args, "ok", _summary(result))
        if result.get("status") == "awaiting_owner_approval":
            # The approval card: the stream and the saved message carry what the owner decides on.
            activity["status"] = "awaiting_approval"
            activity["action_id"] = result["action_id"]
        return ToolOutcome(call.id, call.name, {"ok": True, **result}, activity)

    def _admit(self, call: ToolCall) -> tuple[Tool, ToolArgs]:
        """Every check before a tool may run, in order; raises _Refused or ToolError."""
        if not self.budget_left:
            raise _Refused(
                f"The tool budget for this turn ({self.max_tool_calls} calls) is spent. "
                "Answer the owner with what you have.",
                code="TOOL_BUDGET_EXHAUSTED",
            )
        # Every attempt spends budget, so a model stuck on bad calls still reaches the end.
        self.calls_made += 1

        tool = get_tool(call.name, mode=self.ctx.mode)
        if tool is None:
            if get_tool(call.name, mode="chat") is not None:
                raise _Refused(
                    f"{call.name} is not available in {self.ctx.mode} mode.",
                    code="TOOL_NOT_ALLOWED",
                )
            raise ToolError(f"There is no tool named {call.name!r}.", code="UNKNOWN_TOOL")

        if call.arguments is None:
            raise ToolError(
                'The arguments must be a JSON object, e.g. {"task_id": 3}; '
                f"got {clip(call.raw_arguments or '(nothing)', ACTIVITY_TEXT)}.",
                code="INVALID_ARGUMENTS",
            )
        try:
            args = tool.args.model_validate(call.arguments)
        except ValidationError as exc:
            raise ToolError(_explain(exc), code="INVALID_ARGUMENTS") from None

        if self._per_tool[tool.name] >= tool.cap:
            raise _Refused(
                f"{tool.name} may be called at most {tool.cap} times per turn.",
                code="TOOL_CAP_REACHED",
            )
        key = (tool.name, json.dumps(args.model_dump(mode="json"), sort_keys=True))
        if self._identical[key] >= self.max_identical_calls:
            raise _Refused(
                f"You already called {tool.name} with these arguments "
                f"{self._identical[key]} times; use the result you have.",
                code="DUPLICATE_CALL",
            )
        self._per_tool[tool.name] += 1
        self._identical[key] += 1
        return tool, args

    def _propose(self, tool: Tool, args: ToolArgs, ctx: ToolContext) -> dict[str, Any]:
        """Where a destructive call goes instead of running: ``prepare`` resolves the exact target
        without changing anything, and the proposal waits for the owner as a pending action."""
        proposal = tool.prepare(args, ctx)
        action = pending_action_propose(
            tool=tool, proposal=proposal, ctx=ctx, seen=self.owner_watching
        )
        note = "Nothing has changed yet. Tell the owner it waits for their approval; never say it is done."
        if action.reused:
            note = (
                f"This exact change was already waiting for the owner's approval (#{action.pk}); "
                "it still waits, and no second approval was asked for. " + note
            )
        return {
            "status": "awaiting_owner_approval",
            "action_id": action.pk,
            "summary": action.summary,
            "note": note,
        }

    def _failure(
        self, call: ToolCall, args: Any, status: ActivityStatus, code: str, message: str
    ) -> ToolOutcome:
        failed = {"ok": False, "error": {"code": code, "message": message}}
        return ToolOutcome(call.id, call.name, failed, _activity(call.name, args, status, message))


def _explain(exc: ValidationError) -> str:
    problems = []
    for error in exc.errors(include_url=False)[:MAX_ERRORS_SHOWN]:
        where = ".".join(str(part) for part in error["loc"]) or "arguments"
        problems.append(f"{where}: {error['msg']}")
    more = exc.error_count() - MAX_ERRORS_SHOWN
    if more > 0:
        problems.append(f"and {more} more")
    return "Invalid arguments: " + "; ".join(problems) + "."


def _shorten(value: Any) -> Any:
    if isinstance(value, str):
        return clip(value, ACTIVITY_TEXT)
    if isinstance(value, dict):
        return {str(k): _shorten(v) for k, v in list(value.items())[:20]}
    if isinstance(value, list):
        return [_shorten(v) for v in value[:20]]
    return value


def _activity(name: str, args: Any, status: ActivityStatus, summary: str) -> ToolActivity:
    return {
        "tool": name,
        "args": _shorten(args),
        "status": status,
        "summary": clip(summary, ACTIVITY_TEXT),
    }


def _summary(result: dict[str, Any]) -> str:
    """A few words for the owner: what was touched, or how much was found."""
    if result.get("status") == "awaiting_owner_approval":
        return str(result.get("summary") or "Waiting for your approval")
    for key, value in result.items():
        if isinstance(value, list):
            return f"{key}: {len(value)}"
        if isinstance(value, dict):
            label = value.get("title") or value.get("name") or value.get("text")
            if label:
                return f"{key} {value.get('id', '')}: {label}".replace(" :", ":")
    return "done"
