"""Markdown as readable plain text: what a place that shows no formatting gets (a channel that
takes plain text, a push's system notification), instead of raw ``##``, ``**`` and pipes.

The text is rendered by talorys/lib/markdown.py (bounded, sanitised, cached), then its HTML is
read back as text: headings and paragraphs are lines with a blank line between them, list items
start with "- " (or their number), a task's checkbox is "[ ]" or "[x]", table cells are joined
by " | " one row a line, code and paragraphs keep their lines, and a link keeps its address after its words
when they differ. Entities are decoded: the result is text, never HTML.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from talorys.lib.markdown import render_markdown

_BLOCKS = {"p", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "blockquote", "table", "ul", "ol"}
_BLANK_LINES = re.compile(r"\n{3,}")


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.lists: list[int] = []  # per open list: the next number (0: bullets)
        self.href: list[tuple[str, int]] = []  # open links: address, where their words start
        self.cells = 0  # cells so far in the open table row
        self.pre = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _BLOCKS:
            self._line(blank=True)
        if tag in ("ul", "ol", "li"):
            self._list_start(tag, dict(attrs).get("start") or "1")
        elif tag == "input":
            self.out.append("[x] " if "checked" in dict(attrs) else "[ ] ")
        elif tag == "br":
            self.out.append("\n")
        elif tag == "tr":
            self._line()
            self.cells = 0
        elif tag in ("td", "th"):
            if self.cells:
                self.out.append(" | ")
            self.cells += 1
        elif tag == "a":
            self.href.append((dict(attrs).get("href") or "", len(self.out)))
        self.pre += tag == "pre"

    def _list_start(self, tag: str, start: str) -> None:
        if tag != "li":
            self.lists.append(int(start) if tag == "ol" and start.isdigit() else 0)
            return
        self._line()
        number = self.lists[-1] if self.lists else 0
        indent = "  " * max(len(self.lists) - 1, 0)
        self.out.append(f"{indent}{number}. " if number else f"{indent}- ")
        if number:
            self.lists[-1] += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("ul", "ol") and self.lists:
            self.lists.pop()
        elif tag == "a" and self.href:
            href, start = self.href.pop()
            words = "".join(self.out[start:]).strip()
            if href and words != href and href != f"mailto:{words}":
                self.out.append(f" ({href})")
        self.pre -= tag == "pre"
        if tag in _BLOCKS:
            self._line(blank=True)

    def handle_data(self, data: str) -> None:
        if self.pre:
            self.out.append(data)
        elif not (data.isspace() and "\n" in data):  # not the line ends between block tags
            # A line break the writer typed stays one (an email's, a reminder's lines).
            self.out.append(data.lstrip() if self.out and self.out[-1].endswith("\n") else data)

    def _line(self, *, blank: bool = False) -> None:
        text = "".join(self.out)
        if text and not text.endswith("\n"):
            self.out.append("\n")
        if blank and text and not text.endswith("\n\n") and not self.lists:
            self.out.append("\n")


def markdown_to_text(text: str) -> str:
    """``text`` (Markdown) as readable plain text, its blank lines at most one in a row."""
    reader = _Text()
    reader.feed(render_markdown(text))
    reader.close()
    lines = (line.rstrip() for line in "".join(reader.out).splitlines())
    return _BLANK_LINES.sub("\n\n", "\n".join(lines)).strip()
