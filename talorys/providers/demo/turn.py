"""How the demo reads a turn: the owner's last message, and the tool calls made after it with
what each returned (or the error it reported). Each step of the demo reads only this."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from talorys.providers.base import ChatMessage, ToolCall


@dataclass
class Done:
    """One tool call made earlier in this turn and what came back."""

    call: ToolCall | None
    data: Any
    error: str | None

    @property
    def tool(self) -> str:
        return self.call.name if self.call else ""


def current_turn(messages: list[ChatMessage]) -> tuple[str, list[Done]]:
    """The owner's last message and the tool results that followed it, oldest first."""
    start = max((i for i, m in enumerate(messages) if m.role == "user"), default=-1)
    if start < 0:
        return "", []
    calls: dict[str, ToolCall] = {}
    done = []
    for message in messages[start + 1 :]:
        for call in message.tool_calls:
            calls[call.id] = call
        if message.role == "tool":
            data, error = _result(message.content)
            done.append(Done(call=calls.get(message.tool_call_id), data=data, error=error))
    return messages[start].content, done


def _result(content: str) -> tuple[Any, str | None]:
    """A tool message's result, or the error it reports."""
    try:
        data = json.loads(content)
    except ValueError:
        if content.lower().startswith("error"):
            return None, content
        return {"text": content}, None
    if isinstance(data, dict):
        problem = data.get("error")
        if problem:
            message = (
                problem.get("message") or problem.get("code")
                if isinstance(problem, dict)
                else problem
            )
            return None, str(message)
        if data.get("ok") is False:
            return None, str(data.get("message") or "the tool failed")
    return data, None


def field(data: dict[str, Any], nested: str, key: str) -> Any:
    """``data[nested][key]``, or ``data[key]`` when a tool returned the record flat."""
    inner = data.get(nested)
    return (inner.get(key) if isinstance(inner, dict) else None) or data.get(key)


def items(data: Any) -> list[dict[str, Any]]:
    """The records of a tool result that lists some, whatever key it puts them under."""
    if isinstance(data, dict):
        for key in ("tasks", "items", "results", "matches"):
            if isinstance(data.get(key), list):
                data = data[key]
                break
        else:
            data = next((value for value in data.values() if isinstance(value, list)), [])
    return [item for item in data if isinstance(item, dict)] if isinstance(data, list) else []
