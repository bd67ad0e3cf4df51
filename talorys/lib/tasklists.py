"""Markdown task lists ("- [ ] cheese", "- [x] milk") as checkboxes, and ticking one in the text.

A markdown-it core rule (``tasklists``, added by talorys/lib/markdown.py) finds the list items
whose first paragraph starts with ``[ ]``, ``[x]`` or ``[X]``, a space and words (GitHub's task lists),
takes the mark off the text, and puts a checkbox in a label around the item's first paragraph.
The HTML is constants only; nh3 then keeps the checkbox with ``type="checkbox"`` and
``disabled`` forced (markdown.py), so no page can be sent a form field by a note or a reply;
the note's own page enables its boxes for the owner (static/talorys/js/notes.js).

The rule also lists the items it turned into checkboxes, in the order they are shown, with
the source line of each (``env["tasks"]``): ``tick`` changes the mark on the line of the item
the owner ticked, found by that same index, so what is ticked is what was shown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.token import Token

# At the start of the item's first paragraph, with words after it (an empty box has no label).
MARK = re.compile(r"\[([ xX])\][ \t]+(?=\S)")
FIRST_MARK = re.compile(r"\[[ xX]\][ \t]*")
# Lines as markdown-it counts them (it reads \r\n and a lone \r as line ends too).
LINE_ENDS = re.compile(r"(\r\n|\r|\n)")
CHECKBOX = '<input type="checkbox" class="task-check"{checked} disabled>'


@dataclass(frozen=True)
class TaskItem:
    line: int  # of the source text, from 0
    ticked: bool


def tasklists_plugin(md: MarkdownIt) -> None:
    md.core.ruler.push("tasklists", _tasklists)
    md.add_render_rule("task_checkbox", _render_checkbox)


def _tasklists(state: StateCore) -> None:
    tokens = state.tokens
    found: list[TaskItem] = []
    for i in range(2, len(tokens)):
        item, paragraph, inline = tokens[i - 2], tokens[i - 1], tokens[i]
        if not (
            inline.type == "inline"
            and paragraph.type == "paragraph_open"
            and item.type == "list_item_open"
            and inline.children
            and inline.children[0].type == "text"
            and paragraph.map
        ):
            continue
        mark = MARK.match(inline.content)
        first = inline.children[0]
        if mark is None or not FIRST_MARK.match(first.content):
            continue
        ticked = mark.group(1) != " "
        first.content = FIRST_MARK.sub("", first.content, count=1)
        item.attrJoin("class", "task-item")
        checkbox = Token("task_checkbox", "input", 0, meta={"ticked": ticked})
        label_open = Token("html_inline", "", 0, content="<label>")
        label_close = Token("html_inline", "", 0, content="</label>")
        inline.children = [label_open, checkbox, *inline.children, label_close]
        found.append(TaskItem(line=paragraph.map[0], ticked=ticked))
    state.env["tasks"] = found


def _render_checkbox(self: object, tokens: list[Token], idx: int, *_: object) -> str:
    return CHECKBOX.format(checked=" checked" if tokens[idx].meta.get("ticked") else "")


def tick(text: str, item: TaskItem, *, ticked: bool) -> str:
    """``text`` with the mark of ``item`` (one of ``env["tasks"]`` of this same text) set to
    ``[x]`` or ``[ ]``; everything else as it was, line ends included."""
    parts = LINE_ENDS.split(text)  # lines at the even places, their ends between
    line = parts[2 * item.line]
    start = line.index("[")  # the first on the line: before it only list marks, ">" and spaces
    parts[2 * item.line] = line[:start] + ("[x]" if ticked else "[ ]") + line[start + 3 :]
    return "".join(parts)
