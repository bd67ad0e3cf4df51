"""What searching shares below the apps: the longest query text, and a snippet around a match
(recall's, memory/recall/engine.py, finds the match by terms and cuts the same window).

Ranking itself is the recall engine's (memory/recall/), above the owner's data.
"""

from __future__ import annotations

# The longest search or filter text the API and the tools accept.
QUERY_MAX = 200


SNIPPET_CHARS = 160


def window(text: str, at: int, width: int = SNIPPET_CHARS) -> str:
    """``width`` characters of ``text`` (white space already folded) around position ``at``,
    with an ellipsis where it was cut."""
    start = max(0, at - width // 3)
    piece = text[start : start + width]
    return ("…" if start else "") + piece + ("…" if start + width < len(text) else "")


def snippet(text: str, q: str, width: int = SNIPPET_CHARS) -> str:
    """A window of ``text`` around the first match of ``q``."""
    text = " ".join(text.split())
    at = text.lower().find(q.lower())
    if at < 0:
        return text[:width]
    return window(text, at, width)
