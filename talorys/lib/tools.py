"""The tool contract and the registry of every tool the model may call, by name.

A tool is declared once: name, description, pydantic argument schema, permission and per-turn
cap. Apps declare their tools in their own ``tools.py`` and register them when they load
(``AppConfig.ready``). The executor (agent/) and the approval commit path (approvals/) find tools
here by name, so neither imports the other. Provider adapters translate ``Tool.spec()`` to their
wire format; tools never see vendor types.

``ListTool`` is the shape of the read tools that list or search one kind of row; a tool call's
``ctx.zone`` is the owner's time zone, read at most once per call.

Permissions:
- ``read``: no state change beyond bookkeeping.
- ``write``: an immediate, owner-visible change (create, update, complete, append...).
- ``destructive``: never runs during a turn. ``prepare`` resolves the exact target without
  changing anything and returns a ``Proposal``; ``commit`` runs only after the owner approves it,
  and only while ``snapshot`` of the target still equals the proposal's.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from enum import StrEnum
from functools import cached_property
from typing import Any, ClassVar, Literal
from zoneinfo import ZoneInfo

from django.db.models import QuerySet
from pydantic import BaseModel, ConfigDict

from talorys.lib.actors import Actor
from talorys.lib.errors import AppError

# "chat": every tool (a turn, or an MCP client with a write token); "scheduled": read tools and
# the allow-listed writes; "read": read tools only (a /v1 turn or an MCP client with a read
# token).
Mode = Literal["chat", "scheduled", "read"]


class Permission(StrEnum):
    READ = "read"
    WRITE = "write"
    DESTRUCTIVE = "destructive"


# The one write a scheduled run may make: telling the owner something.
SCHEDULED_WRITE_ALLOWLIST = frozenset({"notify_owner"})


class ToolError(AppError):
    """A failure the model should see and may recover from (bad id, nothing found...)."""

    code = "TOOL_ERROR"


class ToolArgs(BaseModel):
    """Base for argument schemas: unknown fields are an error the model can correct."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class NoArgs(ToolArgs):
    pass


# The owner's settings live in an app above this layer, so that app registers how to read the
# zone (talorys/owner/apps.py) when it is ready.
_zone_reader: Callable[[], ZoneInfo] | None = None


def register_zone_reader(reader: Callable[[], ZoneInfo]) -> None:
    global _zone_reader
    _zone_reader = reader


@dataclass(frozen=True)
class ToolContext:
    mode: Mode = "chat"
    conversation_id: int | None = None
    message_id: int | None = None
    # Who acts, recorded on changes and notifications: "chat", "automation:<id>", "mcp:<prefix>".
    source: str = "chat"
    # Who proposes, in words, on an approval card and its notification ("the /v1 client “X”",
    # "the automation “Y”"); empty: approvals words it from ``source``.
    proposer: str = ""

    @property
    def actor(self) -> Actor:
        """Who the services record as making a change, with the turn that made it."""
        return Actor(
            source=self.source, conversation_id=self.conversation_id, message_id=self.message_id
        )

    @cached_property
    def zone(self) -> ZoneInfo:
        """The owner's time zone, in which a tool shows times: read when a tool first needs it,
        then kept. The executor gives every call a context of its own (``for_call``), so each
        call reads the zone as it is then, once, and a call that shows no time never reads it."""
        if _zone_reader is None:
            raise RuntimeError("No reader of the owner's time zone is registered.")
        return _zone_reader()

    def for_call(self) -> ToolContext:
        """A copy for one tool call, which has not read the zone yet."""
        return replace(self)


# The target_id of a proposal that makes something new: it has no target yet, so two of them
# never compete for one (approvals keeps one waiting proposal per tool and target otherwise).
NEW_TARGET = 0


@dataclass
class Proposal:
    """What a destructive tool's ``prepare`` found: the exact target (``NEW_TARGET`` when it
    makes something) and what would happen."""

    target_id: int
    snapshot: str
    summary: str
    payload: dict[str, Any] = field(default_factory=dict)
    preview: str = ""


def snapshot_hash(fields: dict[str, Any]) -> str:
    """A stable hash over the fields of a target that matter to an approval."""
    encoded = json.dumps(fields, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(encoded.encode()).hexdigest()


class Tool:
    name: ClassVar[str]
    description: ClassVar[str]
    args: ClassVar[type[ToolArgs]] = NoArgs
    permission: ClassVar[Permission] = Permission.READ
    cap: ClassVar[int] = 8  # calls per turn
    _spec: ClassVar[dict[str, Any]]  # set by spec() on each class, once

    def run(self, args: Any, ctx: ToolContext) -> dict[str, Any]:
        """Read and write tools: do it and return a JSON-able result."""
        raise NotImplementedError

    # Destructive tools implement these three instead of ``run``.
    def prepare(self, args: Any, ctx: ToolContext) -> Proposal:
        raise NotImplementedError

    def snapshot(self, target_id: int) -> str | None:
        """The target's current snapshot hash, or None when it no longer exists."""
        raise NotImplementedError

    def commit(self, proposal: Proposal, ctx: ToolContext) -> dict[str, Any]:
        """Carry out an approved proposal. A ToolError or AppError (e.g. NotFound from a service)
        marks the approval failed with its message; the approval's transaction rolls back."""
        raise NotImplementedError

    def undo(self, proposal: Proposal, result: dict[str, Any]) -> dict[str, Any]:
        """Reverse a committed action, where the tool can."""
        raise ToolError("This action cannot be undone.", code="NOT_UNDOABLE")

    @classmethod
    def allowed_in(cls, mode: Mode) -> bool:
        if mode == "chat" or cls.permission == Permission.READ:
            return True
        return mode == "scheduled" and cls.name in SCHEDULED_WRITE_ALLOWLIST

    @classmethod
    def spec(cls) -> dict[str, Any]:
        """Vendor-neutral description: name, description, JSON schema of the arguments.

        Built once per class: pydantic rebuilds a schema on every call, which cost ~7 ms a model
        step with 30 tools (benchmarks/turn_overhead.py). Callers must not mutate the result.
        """
        cached = cls.__dict__.get("_spec")
        if cached is None:
            cached = {
                "name": cls.name,
                "description": cls.description,
                "parameters": cls.args.model_json_schema(),
            }
            cls._spec = cached
        return cached


class ListTool(Tool):
    """A read tool that shows rows of one kind: ``{key: [item, ...], "total": n}``.

    ``rows`` checks the filters and selects: a queryset, shown up to the limit and counted in
    full, or a list that is already ranked and cut to the limit (recall's), counted as it is.
    ``item`` shapes one row for the model, with times in ``ctx.zone``.
    """

    permission = Permission.READ
    key: ClassVar[str]  # the result's list: "tasks", "notes"...
    # How many rows to show, for a tool whose arguments carry no ``limit``.
    shown: ClassVar[int | None] = None

    def rows(self, args: Any, ctx: ToolContext) -> QuerySet[Any] | list[Any]:
        raise NotImplementedError

    def item(self, row: Any, args: Any, ctx: ToolContext) -> dict[str, Any]:
        raise NotImplementedError

    def run(self, args: Any, ctx: ToolContext) -> dict[str, Any]:
        rows = self.rows(args, ctx)
        if isinstance(rows, list):
            return {self.key: [self.item(row, args, ctx) for row in rows], "total": len(rows)}
        shown = rows[: self.shown or args.limit]
        return {self.key: [self.item(row, args, ctx) for row in shown], "total": rows.count()}


_REGISTRY: dict[str, Tool] = {}


def register(tool_class: type[Tool]) -> type[Tool]:
    """Class decorator: add a tool to the registry. A second tool of the same name replaces the
    first while keeping its contract (the semantic search wrappers rely on this)."""
    existing = _REGISTRY.get(tool_class.name)
    if existing is not None and (
        existing.permission != tool_class.permission or existing.args is not tool_class.args
    ):
        raise ValueError(f"Tool {tool_class.name!r} is already registered with another contract.")
    _REGISTRY[tool_class.name] = tool_class()
    return tool_class


def get_tool(name: str, *, mode: Mode = "chat") -> Tool | None:
    """The tool of that name when the mode permits it, else None."""
    tool = _REGISTRY.get(name)
    return tool if tool is not None and tool.allowed_in(mode) else None


def tools_for(mode: Mode) -> list[Tool]:
    return [tool for tool in _REGISTRY.values() if tool.allowed_in(mode)]


def all_tools() -> list[Tool]:
    return list(_REGISTRY.values())
