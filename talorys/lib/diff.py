"""A word-level diff of two texts, for the pages, the chat's approval cards and the change log.

``text_diff`` gives runs of ``("eq" | "del" | "ins", text)``; whitespace stays with the words,
so joining the ``eq`` and ``ins`` runs gives the new text back and ``eq`` plus ``del`` the old.
"""

from __future__ import annotations

import difflib
import re
from typing import Literal, TypedDict

# A long text is compared line by line: difflib is quadratic in the worst case.
WORD_DIFF_MAX_CHARS = 20_000
_TOKENS = re.compile(r"\s+|[^\s]+")

Op = Literal["eq", "del", "ins"]


class DiffRun(TypedDict):
    op: Op
    text: str


def _tokens(text: str, by_line: bool) -> list[str]:
    return text.splitlines(keepends=True) if by_line else _TOKENS.findall(text)


def text_diff(before: str, after: str) -> list[DiffRun]:
    by_line = len(before) + len(after) > WORD_DIFF_MAX_CHARS
    old, new = _tokens(before, by_line), _tokens(after, by_line)
    runs: list[DiffRun] = []

    def add(op: Op, parts: list[str]) -> None:
        text = "".join(parts)
        if not text:
            return
        if runs and runs[-1]["op"] == op:
            runs[-1]["text"] += text
        else:
            runs.append(DiffRun(op=op, text=text))

    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            add("eq", old[i1:i2])
            continue
        add("del", old[i1:i2])
        add("ins", new[j1:j2])
    return runs
