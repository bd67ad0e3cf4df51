"""The model's one search over tasks, notes, projects and memories."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from talorys.lib import search as unified_search
from talorys.lib.tools import Permission, Tool, ToolArgs, ToolContext, register

SEARCH_PER_KIND = 10


class SearchArgs(ToolArgs):
    query: str = Field(
        min_length=1, max_length=unified_search.QUERY_MAX, description="What to look for."
    )
    kinds: list[Literal["tasks", "notes", "projects", "memories"]] | None = Field(
        None, min_length=1, description="Limit the search to these kinds; omit for all."
    )


@register
class Search(Tool):
    name = "search"
    description = (
        "Search tasks, notes, projects and memories at once. Each hit has kind, id, title and a "
        "snippet; use the id with that kind's tools (e.g. read_note for a note)."
    )
    args = SearchArgs
    permission = Permission.READ
    cap = 6

    def run(self, args: SearchArgs, ctx: ToolContext) -> dict[str, Any]:
        kinds = list(dict.fromkeys(args.kinds)) if args.kinds else None
        hits = unified_search.search(q=args.query, kinds=kinds, limit=SEARCH_PER_KIND)
        return {"hits": [dict(hit) for hit in hits]}
