"""Search for the model, backed by recall (memory/recall/).

- ``search``: tasks, notes, projects and memories at once, ranked by recall.
- ``search_tasks`` and ``search_notes`` are the workspace's tools replaced in place: same
  name, argument schema, permission and cap, registered over the originals
  (talorys.lib.tools.register checks the contract). Recall ranks first (words in any form, or
  meaning when an embedder is on); the original substring matches fill the rest, so a fragment
  of a code or a word still finds its item. Each keeps the original's shape (a ``ListTool``)
  and chooses only its rows.

The same tools serve chat and scheduled runs (they are read tools).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, TypeVar

from django.db.models import Model, QuerySet
from pydantic import Field

from memory import selectors
from talorys.lib.search import QUERY_MAX, snippet
from talorys.lib.tools import Permission, Tool, ToolArgs, ToolContext, register
from talorys.workspace import selectors as workspace_selectors
from talorys.workspace.models import Note, Task
from talorys.workspace.tools import notes as note_tools
from talorys.workspace.tools import tasks as task_tools

SEARCH_PER_KIND = 10
_M = TypeVar("_M", bound=Model)


def ranked_rows(
    *, query: str, kind: str, listing: Callable[..., QuerySet[_M]], limit: int
) -> list[tuple[_M, str]]:
    """Rows of one kind for ``query`` with a snippet each: recall's order first, then
    substring matches (``listing``: the kind's list selector, which takes ``q``)."""
    hits = selectors.recall_items(query=query, kinds=[kind], limit=limit)
    found = {row.pk: row for row in listing().filter(pk__in=[hit.id for hit in hits])}
    chosen = [(found[hit.id], hit.snippet) for hit in hits if hit.id in found]
    if len(chosen) < limit:
        more = listing(q=query).exclude(pk__in=[hit.id for hit in hits])[: limit - len(chosen)]
        chosen += [(row, "") for row in more]
    return chosen


class SearchArgs(ToolArgs):
    query: str = Field(min_length=1, max_length=QUERY_MAX, description="What to look for.")
    kinds: list[Literal["task", "note", "project", "memory"]] | None = Field(
        None, min_length=1, description="Limit the search to these kinds; omit for all."
    )


@register
class Search(Tool):
    name = "search"
    description = (
        "Search tasks, notes, projects and memories at once, best matches first (words in any "
        "form, and meaning when semantic recall is on). Each hit has kind, id, title and a "
        "snippet; use the id with that kind's tools (e.g. read_note for a note)."
    )
    args = SearchArgs
    permission = Permission.READ
    cap = 6

    def run(self, args: SearchArgs, ctx: ToolContext) -> dict[str, Any]:
        kinds = list(dict.fromkeys(args.kinds or ["task", "note", "project", "memory"]))
        hits = selectors.recall_items(
            query=args.query, kinds=list(kinds), limit=SEARCH_PER_KIND * len(kinds)
        )
        return {
            "hits": [
                {"kind": h.kind, "id": h.id, "title": h.title, "snippet": h.snippet} for h in hits
            ]
        }


@register
class SearchTasks(task_tools.SearchTasks):
    description = (
        "Find tasks by words in their title or details, best matches first. Use it to get the "
        "id of a task the owner names before updating or completing it."
    )

    def rows(self, args: task_tools.SearchTasksArgs, ctx: ToolContext) -> list[Task]:
        tasks = ranked_rows(
            query=args.query, kind="task", listing=workspace_selectors.task_list, limit=args.limit
        )
        return [task for task, _ in tasks]


@register
class SearchNotes(note_tools.SearchNotes):
    description = (
        "Find notes by words in their title or text, best matches first. Returns ids and the "
        "matching passage; use read_note for the full text."
    )

    def rows(self, args: note_tools.SearchNotesArgs, ctx: ToolContext) -> list[tuple[Note, str]]:
        """Each note with recall's passage, or none for a substring match."""
        return ranked_rows(
            query=args.query, kind="note", listing=workspace_selectors.note_list, limit=args.limit
        )

    def item(self, row: Any, args: note_tools.SearchNotesArgs, ctx: ToolContext) -> dict[str, Any]:
        note, excerpt = row  # a row of ``rows``: the note, and its passage
        return note_tools._note(note, ctx.zone) | {
            "excerpt": excerpt or snippet(note.content or note.title, args.query)
        }
