"""The demo's tasks and notes: the arguments of create_task and create_note, the open tasks
listed, a task deleted after a search for it, and what it says once each is done."""

from __future__ import annotations

from typing import Any

from talorys.providers.base import ProviderEvent
from talorys.providers.demo.events import call, say, tool_call
from talorys.providers.demo.parse import DemoRequest, capitalised
from talorys.providers.demo.turn import Done, items


def note_arguments(what: str) -> dict[str, str]:
    """ "Groceries: eggs, bread" is the note "Groceries" with "eggs, bread" in it."""
    title, _, content = what.partition(":")
    return {"title": capitalised(title.strip())} | (
        {"content": content.strip()} if content.strip() else {}
    )


def task_list(tasks: list[dict[str, Any]], total: Any) -> str:
    if not tasks:
        return "You have no open tasks."
    lines = "\n".join(f"- {task.get('title')}" for task in tasks)
    if isinstance(total, int) and total > len(tasks):
        return f"You have {total} open tasks; here are the first {len(tasks)}:\n{lines}"
    if len(tasks) == 1:
        return f"You have 1 open task:\n{lines}"
    return f"You have {len(tasks)} open tasks:\n{lines}"


def delete_found(
    request: DemoRequest, matches: list[dict[str, Any]], usable: set[str], number: int
) -> list[ProviderEvent]:
    """After the search for the task to delete: delete the one match, or ask which."""
    if not matches:
        return say(f"I couldn't find a task matching “{request.what}”.")
    if len(matches) > 1:
        lines = "\n".join(f"- {task.get('title')} (#{task.get('id')})" for task in matches)
        return say(
            f"Several tasks match “{request.what}”:\n{lines}\n"
            "Which one should I delete? Use more of its title."
        )
    task = matches[0]
    if "delete_task" not in usable:
        return say(f"I found “{task.get('title')}”, but deleting tasks isn't available here.")
    return call(tool_call(number, "delete_task", {"task_id": task.get("id")}))


def title_of(done: list[Done], task_id: Any) -> str:
    """The title of the task a search earlier in this turn found under ``task_id``."""
    for earlier in done:
        for task in items(earlier.data):
            if task.get("id") == task_id:
                return str(task.get("title"))
    return f"#{task_id}"


def deleted(data: dict[str, Any], title: str) -> str:
    # A destructive tool only proposes; the owner approves it on the approval card.
    if "action_id" in data or data.get("status") in ("awaiting_owner_approval", "pending"):
        return f"I've asked for your approval to delete the task “{title}”."
    return f"Deleted the task “{title}”."
