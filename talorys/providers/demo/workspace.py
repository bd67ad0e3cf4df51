"""The demo's tasks and notes: the arguments of create_task and create_note, the open tasks
listed, a task deleted or completed after a search for it (choosing.py says which task the
owner named), and what it says once each is done."""

from __future__ import annotations

import re
from typing import Any

from talorys.providers.base import ProviderEvent
from talorys.providers.demo.choosing import candidates, named, plain
from talorys.providers.demo.events import call, say, tool_call
from talorys.providers.demo.parse import DemoRequest, capitalised
from talorys.providers.demo.turn import Done, field, items


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


# Per request (named as its tool): the words for what it does.
_ACTS = {"delete_task": ("delete", "deleting"), "complete_task": ("mark done", "completing")}


def by_number(request: DemoRequest, usable: set[str], number: int) -> list[ProviderEvent] | None:
    """ "delete the task #7": the call for task 7 with no search, as the question about several
    tasks of the same title suggests; None for a task named in words."""
    if request.intent not in _ACTS or not re.fullmatch(r"#\d+", request.what):
        return None
    if request.intent not in usable:
        return say(f"I can't use the {request.intent} tool right now, so I couldn't do that.")
    return call(tool_call(number, request.intent, {"task_id": int(request.what[1:])}))


def found(
    request: DemoRequest, tasks: list[dict[str, Any]], usable: set[str], number: int
) -> list[ProviderEvent]:
    """After the search for the task to delete or complete: act on the one the owner named
    (choosing.py), or ask which, or say none matches."""
    tool, (verb, doing) = request.intent, _ACTS[request.intent]
    completing = request.intent == "complete_task"
    # A task to complete is an open one; a done one is only said to be done.
    matches = candidates(request, [t for t in tasks if t.get("status") != "done" or not completing])
    if completing and not matches and candidates(request, tasks):
        return say(f"The task “{candidates(request, tasks)[0].get('title')}” is already done.")
    if not matches:
        kind = "an open task" if completing else "a task"
        return say(f"I couldn't find {kind} matching “{named(request)}”.")
    if len(matches) > 1:
        return say(_which(request, matches, verb))
    task = matches[0]
    if tool not in usable:
        return say(f"I found “{task.get('title')}”, but {doing} tasks isn't available here.")
    return call(tool_call(number, tool, {"task_id": task.get("id")}))


def _which(request: DemoRequest, matches: list[dict[str, Any]], verb: str) -> str:
    """The question: each candidate on its own line, then the question in its own paragraph."""
    lines = "\n".join(f"- {task.get('title')} (#{task.get('id')})" for task in matches)
    how = "Use more of its title."
    titles = [plain(str(task.get("title"))) for task in matches]
    if len(set(titles)) < len(titles):  # the same title twice: only the number tells them apart
        example = "delete the task" if request.intent == "delete_task" else "complete the task"
        how = f"Use more of its title, or its number (“{example} #{matches[0].get('id')}”)."
    return f"Several tasks match “{named(request)}”:\n{lines}\n\nWhich one should I {verb}? {how}"


def completed(data: dict[str, Any], title: str) -> str:
    title = str(field(data, "task", "title") or title)
    if data.get("already_done"):
        return f"The task “{title}” was already done."
    return f"Marked the task “{title}” as done."


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
