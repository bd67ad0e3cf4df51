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
from agent.context import estimate_tokens
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
        self.spent: dict[str, Any] | None = None  # the done event's usage (TurnUsage)

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
        if kind == "done":
            self.spent = event.get("usage")
        return ""

    def usage(self) -> dict[str, int]:
        """OpenAI's ``usage`` of the reply: the turn's (TurnUsage), or, when its end was not
        seen (a follower that fell behind), the reply's own tokens estimated."""
        spent = self.spent or {
            "prompt_tokens": 0,
            "completion_tokens": estimate_tokens(self.content),
        }
        return usage_of(spent["prompt_tokens"], spent["completion_tokens"])

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


def usage_of(prompt_tokens: int, completion_tokens: int) -> dict[str, int]:
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }


def chunk(
    completion_id: str, created: int, model: str, delta: dict[str, Any], finish: str | None
) -> str:
    """One ``chat.completion.chunk``; ``model`` is the one the request named (``model_named``)."""
    return _sse(
        {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
    )


def usage_chunk(completion_id: str, created: int, model: str, usage: dict[str, int]) -> str:
    """What ``stream_options.include_usage`` asks for, as OpenAI sends it: a last chunk with
    an empty ``choices`` and the ``usage`` of the whole reply."""
    return _sse(
        {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [],
            "usage": usage,
        }
    )


def model_named(asked: str) -> str:
    """The model an answer names: the one its request named, as OpenAI's clients compare it with
    what they asked (a client that lists several shows the answer under that name). A request for
    ``talorys`` (schemas.MODEL_ID, Talorys with the owner's default model) is answered as
    ``talorys`` too, not as the default's id: that is the name the client chose, and the default
    can change between two requests of one conversation."""
    return asked


def _sse(body: dict[str, Any]) -> str:
    return f"data: {json.dumps(body, ensure_ascii=False)}\n\n"


def completion(
    completion_id: str, created: int, model: str, content: str, usage: dict[str, int]
) -> dict[str, Any]:
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": usage,
    }
