"""What the demo answers with: a tool call, or text streamed in a few deltas as a model would."""

from __future__ import annotations

import json
from typing import Any

from talorys.providers.base import Finish, ProviderEvent, TextDelta, ToolCall


def tool_call(number: int, name: str, arguments: dict[str, Any]) -> ToolCall:
    return ToolCall(
        id=f"demo_{number}", name=name, arguments=arguments, raw_arguments=json.dumps(arguments)
    )


def call(made: ToolCall) -> list[ProviderEvent]:
    return [made, Finish("tool_calls")]


def say(text: str) -> list[ProviderEvent]:
    """The text in a few deltas, split between words, as a model would stream it."""
    words = text.split(" ")
    size = max(1, -(-len(words) // 3))
    pieces = [" ".join(words[i : i + size]) for i in range(0, len(words), size)]
    deltas = [
        TextDelta(piece + (" " if i < len(pieces) - 1 else "")) for i, piece in enumerate(pieces)
    ]
    return [*deltas, Finish("stop")]
