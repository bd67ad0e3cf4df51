"""One sentence for the owner about each tool call: the live ``tool`` event's and the stored
message's (schemas.MessageOut) come from here, so the page says the same thing either way.

Built from what every activity record holds (executor.ToolActivity): the tool's name, which
reads as a verb and an object (``create_task``, ``search_notes``, ``append_to_note``), its
status, and the executor's summary ("tasks: 3", "task 5: Buy oat milk", a proposal's own
"Delete the task “X”", or the reason it failed). Not stored: older messages get theirs too.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from agent.executor import ToolActivity

# The verbs tool names start with, as the owner reads them done.
_DONE = {
    "append_to": "Added to",
    "cancel": "Cancelled",
    "complete": "Completed",
    "correct": "Corrected",
    "create": "Added",
    "delete": "Deleted",
    "list": "Looked through",
    "notify": "Notified",
    "pause": "Paused",
    "read": "Read",
    "remember": "Remembered",
    "rename": "Renamed",
    "resume": "Resumed",
    "rewrite": "Rewrote",
    "schedule": "Scheduled",
    "search": "Searched",
    "update": "Updated",
}
_VERBS = sorted(_DONE, key=len, reverse=True)  # "append_to" before any shorter prefix

_COUNT = re.compile(r"^[a-z_]+: (\d+)$")  # "tasks: 3"
_LABEL = re.compile(r"^[a-z_]+(?: \d+)?: (.+)$", re.DOTALL)  # "task 5: Buy oat milk"


class ShownActivity(ToolActivity):
    """An activity record as the owner's page gets it: with its sentence."""

    sentence: str


def _what(name: str) -> str:
    """What the tool did, from its name: "Searched your tasks", "Added the task"."""
    for verb in _VERBS:
        if name == verb or name.startswith(verb + "_"):
            thing = name[len(verb) + 1 :].replace("_", " ")
            if not thing:
                return _DONE[verb] + (" everything" if verb == "search" else "")
            if thing == "owner":
                return f"{_DONE[verb]} you"
            return f"{_DONE[verb]} {'your' if thing.endswith('s') else 'the'} {thing}"
    return "Used " + name.replace("_", " ")


def activity_sentence(activity: Mapping[str, Any]) -> str:
    status = activity.get("status")
    summary = " ".join(str(activity.get("summary") or "").split())
    if status == "error":
        return f"Failed: {summary}" if summary else "Failed."
    if status == "refused":
        return f"Not run: {summary}" if summary else "Not run."
    if status == "awaiting_approval":
        if not summary or summary.lower().startswith("waiting"):
            return summary or "Waiting for your approval"
        return f"Waiting for your approval to {summary[0].lower()}{summary[1:]}"
    what = _what(str(activity.get("tool") or "a tool"))
    if not summary or summary == "done":
        return what
    if count := _COUNT.match(summary):
        return f"{what}: {count.group(1)} found"
    if label := _LABEL.match(summary):
        return f"{what} “{label.group(1)}”"
    return f"{what}: {summary}"


def shown_activity(activity: Mapping[str, Any]) -> ShownActivity:
    # A stored record is a plain dict from JSON; the executor made it a ToolActivity.
    shown: Any = {**activity, "sentence": activity_sentence(activity)}
    return shown
