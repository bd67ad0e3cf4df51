"""A turn's events as an OpenAI client reads a reply: its content, piece by piece.

The content is what the model says, with each tool call as a line of its own between
paragraphs, in the order they happened: ``› Added the task “Buy oat milk”``. A destructive
action the model proposed says that it waits for the owner's approval, and where to give it
(the Approvals page): nothing is done until then. history.py leaves these lines out when it
compares a resent reply with the saved one, which holds only the model's words.

A turn's ``error`` becomes an error answer with its status when nothing was said yet (the
budget spent: 429, the model's server failing: 502), else an ``error`` object in the stream,
which OpenAI's clients raise as they do for their own API.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from agent.completions.history import ACTIVITY_MARK
from agent.completions.schemas import MODEL_ID
from agent.live.turns import Event
from talorys.lib.errors import BudgetExhausted
from talorys.web.openai_errors import openai_error

# The events that say something to the client; title and start are Talorys's own.
SAYING = frozenset({"text", "tool", "error", "done", "snapshot"})


def activity_line(activity: dict[str, Any], approvals_url: str) -> str:
    line = f"{ACTIVITY_MARK} {activity.get('sentence') or activity.get('tool')}"
    if activity.get("status") == "awaiting_approval":
        line += f". Nothing is done until you approve it in Talorys: {approvals_url}"
    return line


class Reply:
    """The content said so far; ``piece`` turns the next event into the text to send."""

    def __init__(self, approvals_url: str) -> None:
        self.approvals_url = approvals_url
        self.content = ""
        self.model_text = ""  # the model's words alone, as a snapshot counts them
        self.activities = 0

    def piece(self, event: Event) -> str:
        kind = event["type"]
        if kind == "text":
            self.model_text += event["delta"]
            return self._add(event["delta"])
        if kind == "tool":
            self.activities += 1
            return self._line(event["activity"])
        if kind == "snapshot":  # the follower fell behind: what it missed, from the reply so far
            missed = "".join(self._line(a) for a in event["activity"][self.activities :])
            self.activities = len(event["activity"])
            text = event["text"][len(self.model_text) :]
            self.model_text = event["text"]
            return missed + self._add(text)
        return ""

    def _line(self, activity: dict[str, Any]) -> str:
        gap = "" if not self.content or self.content.endswith("\n\n") else "\n\n"
        return self._add(gap + activity_line(activity, self.approvals_url) + "\n\n")

    def _add(self, text: str) -> str:
        self.content += text
        return text


def turn_error(event: Event) -> tuple[int, dict[str, Any]]:
    """The status and body of the error answer a turn's ``error`` event becomes."""
    return error_answer(
        str(event.get("code") or ""), str(event.get("message") or "The reply failed.")
    )


def error_answer(code: str, message: str) -> tuple[int, dict[str, Any]]:
    """The status and body of the error answer for a turn's failure of ``code``, whether the
    turn said it or the request was refused before it began (a spent budget: api.py)."""
    if code == BudgetExhausted.code:
        return 429, openai_error(
            429, message, type_="insufficient_quota", code="insufficient_quota"
        )
    if code.startswith("PROVIDER_"):
        return 502, openai_error(502, message, code=code.lower())
    return 500, openai_error(500, message, code=code.lower() or None)


async def first_saying(events: AsyncIterator[Event]) -> Event | None:
    """The turn's first event that says something to the client (None if it ended silent)."""
    async for event in events:
        if event["type"] in SAYING:
            return event
    return None


def _answer(kind: str, completion_id: str, created: int, choice: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": completion_id,
        "object": kind,
        "created": created,
        "model": MODEL_ID,
        "choices": [{"index": 0, **choice}],
    }


def chunk(completion_id: str, created: int, delta: dict[str, Any], finish: str | None) -> str:
    body = _answer(
        "chat.completion.chunk", completion_id, created, {"delta": delta, "finish_reason": finish}
    )
    return f"data: {json.dumps(body, ensure_ascii=False)}\n\n"


def completion(completion_id: str, created: int, content: str) -> dict[str, Any]:
    message = {"role": "assistant", "content": content}
    return _answer(
        "chat.completion", completion_id, created, {"message": message, "finish_reason": "stop"}
    )
