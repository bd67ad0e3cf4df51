"""Model tools over memories: list, remember, correct. Registered when the memory app loads.

Every change goes through memory.services, which writes a MemoryRevision naming who made it and
the turn. ``remember`` and ``correct_memory`` run the conflict check first; the result tells the
model what the check found (already known, superseded an older fact, or contradicts one, which
the model should raise with the owner).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, ClassVar
from zoneinfo import ZoneInfo

from django.db.models import QuerySet
from pydantic import Field

from memory import selectors, services
from memory.models import Memory
from memory.tools.search import ranked_rows
from talorys.history.tools import SoftDeleteTool
from talorys.lib.search import QUERY_MAX
from talorys.lib.tools import (
    ListTool,
    Permission,
    Proposal,
    Tool,
    ToolArgs,
    ToolContext,
    register,
)
from talorys.web.schemas import LIST_LIMIT_MAX, BoundedDate, one_of
from talorys.workspace.tools.common import ReadVersion, local_iso

# The model's choices and limit, shown to the model inline (one_of) as they are on the model.
Category = Annotated[Memory.Category, one_of(Memory.Category)]
MemoryText = Annotated[
    str,
    Field(
        min_length=1,
        max_length=Memory.TEXT_MAX,
        description="One short, self-contained statement about the owner, e.g. "
        "'Prefers meetings after 10am' or 'Sister Ana lives in Lisbon'.",
    ),
]


def _memory(memory: Memory, zone: ZoneInfo) -> dict[str, Any]:
    item: dict[str, Any] = {
        "id": memory.pk,
        "text": memory.text,
        "category": memory.category,
        "updated_at": local_iso(memory.updated_at, zone),
        "version": memory.version,
    }
    if memory.valid_from:
        item["valid_from"] = memory.valid_from.isoformat()
    if memory.valid_to:
        item["valid_to"] = memory.valid_to.isoformat()
    if memory.conflicts_with_id:
        item["contradicts_memory"] = memory.conflicts_with_id
    return item


def _outcome(result: services.Remembered, zone: ZoneInfo) -> dict[str, Any]:
    """The memory, and in words what the conflict check found, for the model to act on."""
    out: dict[str, Any] = {"memory": _memory(result.memory, zone)}
    other = _memory(result.other, zone) if result.other is not None else None
    verdict = result.verdict.verdict
    if verdict == "duplicate" and other is not None:
        out["note"] = "Already remembered: nothing new was stored."
        out["already_known"] = other
    elif verdict == "updates" and other is not None:
        out["note"] = "This replaces an older memory, which is kept in history and no longer used."
        out["superseded"] = other
    elif verdict == "contradicts" and other is not None:
        out["note"] = (
            "This contradicts another memory; both are kept. Ask the owner which one holds, "
            "then correct or propose deleting the wrong one."
        )
        out["contradicts"] = other
    if not result.verdict.checked:
        out["conflict_check"] = f"Not checked ({result.verdict.reason}); both are kept."
    return out


class _CheckedWrite(Tool):
    """A write the conflict check runs first (``write``: the service, given the arguments as
    they are named); the result says what it found."""

    permission = Permission.WRITE
    cap = 5
    write: ClassVar[Callable[..., services.Remembered]]

    def run(self, args: ToolArgs, ctx: ToolContext) -> dict[str, Any]:
        # The revision's author: the chat model, or an automation run acting for the owner.
        automation = ctx.source.startswith("automation")
        source = Memory.Source.AUTOMATION if automation else Memory.Source.CHAT
        result = self.write(**args.model_dump(), source=source, actor=ctx.actor)
        return _outcome(result, ctx.zone)


class ListMemoriesArgs(ToolArgs):
    query: str | None = Field(
        None,
        max_length=QUERY_MAX,
        description="Only memories containing these words; omit for all.",
    )
    limit: Annotated[
        int, Field(ge=1, le=LIST_LIMIT_MAX, description="How many to return at most.")
    ] = 20


@register
class ListMemories(ListTool):
    name = "list_memories"
    description = (
        "List what you remember about the owner, most recently changed first, with ids (use an "
        "id with correct_memory). Check here before remembering something that may be known."
    )
    args = ListMemoriesArgs
    cap = 4
    key = "memories"

    def rows(self, args: ListMemoriesArgs, ctx: ToolContext) -> QuerySet[Memory] | list[Memory]:
        if not args.query:
            return selectors.memory_list()
        # Recall's ranking (any word form, meaning when an embedder is on), then substrings.
        found = ranked_rows(
            query=args.query, kind="memory", listing=selectors.memory_list, limit=args.limit
        )
        return [memory for memory, _ in found]

    def item(self, row: Memory, args: ToolArgs, ctx: ToolContext) -> dict[str, Any]:
        return _memory(row, ctx.zone)


class RememberArgs(ToolArgs):
    text: MemoryText
    category: Category = Field(Memory.Category.FACT, description="What kind of memory this is.")
    valid_from: BoundedDate | None = Field(
        None, description="Since when it holds, if the owner said (YYYY-MM-DD)."
    )
    valid_to: BoundedDate | None = Field(
        None, description="Until when it holds, if the owner said (YYYY-MM-DD)."
    )


@register
class Remember(_CheckedWrite):
    name = "remember"
    description = (
        "Remember a lasting fact, preference, person, place or goal the owner told you, for "
        "future conversations. Not for tasks or notes. It is checked against what you already "
        "remember: a duplicate is not stored twice, and a newer fact (a move, a new job) "
        "replaces the older one."
    )
    args = RememberArgs
    write = staticmethod(services.memory_create_checked)


class CorrectMemoryArgs(ToolArgs):
    memory_id: Annotated[
        int, Field(ge=1, description="The memory's id, from list_memories or search.")
    ]
    text: MemoryText
    category: Category | None = Field(None, description="New category; omit to keep it.")
    version: ReadVersion = None


@register
class CorrectMemory(_CheckedWrite):
    name = "correct_memory"
    description = (
        "Replace the text of a memory that is wrong or out of date (the old version is kept in "
        "its history). Get memory_id from list_memories."
    )
    args = CorrectMemoryArgs
    write = staticmethod(services.memory_correct_checked)


class MemoryIdArgs(ToolArgs):
    memory_id: Annotated[int, Field(ge=1, description="The memory's id, from list_memories.")]


@register
class DeleteMemory(SoftDeleteTool):
    name = "delete_memory"
    description = (
        "Propose forgetting one memory. Nothing happens until the owner approves; never say it "
        "is forgotten before that. To fix a wrong fact use correct_memory instead."
    )
    args = MemoryIdArgs
    model = Memory
    id_arg = "memory_id"
    label = "memory"
    snapshot_fields = ("text", "category")

    def describe(self, obj: Memory) -> str:
        return obj.text[:80]

    def commit(self, proposal: Proposal, ctx: ToolContext) -> dict[str, Any]:
        services.memory_delete(
            memory_id=proposal.target_id, source=Memory.Source.OWNER, actor=ctx.actor
        )
        return {"undoable": True}

    def undo(self, proposal: Proposal, result: dict[str, Any]) -> dict[str, Any]:
        services.memory_restore(memory_id=proposal.target_id, source=Memory.Source.OWNER)
        return {"restored": True}
