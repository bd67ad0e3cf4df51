"""Model tools over memories: list, remember, correct. Registered when the memory app loads.

Every change goes through memory.services, which writes a MemoryRevision naming who made it.
"""

from __future__ import annotations

from typing import Annotated, Any
from zoneinfo import ZoneInfo

from pydantic import Field

from memory import selectors, services
from memory.models import Memory
from talorys.lib.schemas import one_of
from talorys.lib.tools import Permission, Proposal, Tool, ToolArgs, ToolContext, register
from talorys.workspace.history import SoftDeleteTool
from talorys.workspace.services import owner_zone
from talorys.workspace.tools.common import local_iso

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
    return {
        "id": memory.pk,
        "text": memory.text,
        "category": memory.category,
        "updated_at": local_iso(memory.updated_at, zone),
    }


def _source(ctx: ToolContext) -> str:
    """The revision's author: the chat model, or an automation run acting for the owner."""
    if ctx.source.startswith("automation"):
        return Memory.Source.AUTOMATION
    return Memory.Source.CHAT


class ListMemoriesArgs(ToolArgs):
    query: str | None = Field(
        None, max_length=200, description="Only memories containing these words; omit for all."
    )
    limit: Annotated[int, Field(ge=1, le=50, description="How many to return at most.")] = 20


@register
class ListMemories(Tool):
    name = "list_memories"
    description = (
        "List what you remember about the owner, most recently changed first, with ids (use an "
        "id with correct_memory). Check here before remembering something that may be known."
    )
    args = ListMemoriesArgs
    permission = Permission.READ
    cap = 4

    def run(self, args: ListMemoriesArgs, ctx: ToolContext) -> dict[str, Any]:
        memories = selectors.memory_list(q=args.query or None)
        zone = owner_zone()
        return {
            "memories": [_memory(m, zone) for m in memories[: args.limit]],
            "total": memories.count(),
        }


class RememberArgs(ToolArgs):
    text: MemoryText
    category: Category = Field(Memory.Category.FACT, description="What kind of memory this is.")


@register
class Remember(Tool):
    name = "remember"
    description = (
        "Remember a lasting fact, preference, person, place or goal the owner told you, for "
        "future conversations. Not for tasks or notes. If a memory already says something "
        "close, use correct_memory on it instead."
    )
    args = RememberArgs
    permission = Permission.WRITE
    cap = 5

    def run(self, args: RememberArgs, ctx: ToolContext) -> dict[str, Any]:
        memory = services.memory_create(
            text=args.text, category=args.category, source=_source(ctx), actor=ctx.actor
        )
        return {"memory": _memory(memory, owner_zone())}


class CorrectMemoryArgs(ToolArgs):
    memory_id: Annotated[
        int, Field(ge=1, description="The memory's id, from list_memories or search.")
    ]
    text: MemoryText
    category: Category | None = Field(None, description="New category; omit to keep it.")


@register
class CorrectMemory(Tool):
    name = "correct_memory"
    description = (
        "Replace the text of a memory that is wrong or out of date (the old version is kept in "
        "its history). Get memory_id from list_memories."
    )
    args = CorrectMemoryArgs
    permission = Permission.WRITE
    cap = 5

    def run(self, args: CorrectMemoryArgs, ctx: ToolContext) -> dict[str, Any]:
        memory = services.memory_update(
            memory_id=args.memory_id,
            text=args.text,
            category=args.category,
            source=_source(ctx),
            actor=ctx.actor,
        )
        return {"memory": _memory(memory, owner_zone())}


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
        services.memory_bin(
            memory_id=proposal.target_id, source=Memory.Source.OWNER, actor=ctx.actor
        )
        return {"undoable": True}

    def undo(self, proposal: Proposal, result: dict[str, Any]) -> dict[str, Any]:
        services.memory_restore(memory_id=proposal.target_id, source=Memory.Source.OWNER)
        return {"restored": True}
