"""Markdown to safe HTML: the one renderer for replies, notes and every page that shows them.

markdown-it-py parses CommonMark with tables, strikethrough and task lists (talorys/lib/tasklists.py:
"- [ ] cheese" as a checkbox), with raw HTML *off* (a stored
``<img onerror>`` comes out as text), Pygments highlights fenced code, and nh3 (ammonia) passes
the result through an allow-list, so whatever the parser lets by, no script, event handler,
style or ``javascript:`` link reaches the page. Links open in a new tab without an opener or a
referrer.

A render is bounded. markdown-it-py costs 20-30 µs a character on some inputs (a run of ``![``
or ``[``, against about 3 µs for an ordinary reply) and grows faster than the text on others
(lists nested deeper and deeper), so a 200,000-character reply of ``![`` took 4.5-13 s. A
render that has used ``BUDGET_SECONDS`` of its thread's CPU time stops and the text is shown as
it is, escaped, in a code block; so is a text past ``MAX_CHARS``, without trying. CPU time,
not wall time, and without the process's full garbage collections: on a busy machine the
same text gets the same rendering. Each rendering, either kind, is kept (``CACHE_CHARS`` of
HTML, by the text's hash), so the next page load of a conversation renders nothing. Async
callers use ``render_markdown_async``: the render runs on ``RENDER_THREADS`` threads of its own,
never on the event loop. benchmarks/markdown_render.py
measures it.
"""

from __future__ import annotations

import asyncio
import gc
import hashlib
import html as html_lib
import threading
import time
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import nh3
from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock
from markdown_it.rules_core import StateCore
from markdown_it.rules_inline import StateInline
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

from talorys.lib.tasklists import TaskItem, tasklists_plugin

TAGS = {
    "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "strong", "em", "s", "del", "code",
    "pre", "blockquote", "ul", "ol", "li", "a", "table", "thead", "tbody", "tr", "th", "td",
    "span", "div", "label", "input",
}  # fmt: skip
ATTRIBUTES = {
    "a": {"href", "title"},
    "ol": {"start"},
    "span": {"class"},
    "div": {"class"},
    "code": {"class"},
    "pre": {"class"},
    "li": {"class"},
    # A task list's checkbox (tasklists.py): its type and disabled are forced below.
    "input": {"class", "checked"},
}
URL_SCHEMES = {"http", "https", "mailto"}
# Thread CPU time one render may use before it gives up for plain text. An ordinary text of
# about 60,000 characters fits (3-4 µs a character): a long note or reply keeps its formatting.
# The worst input found stops within about the budget and the step running
# (benchmarks/markdown_render.py). It runs off the event loop and once per text (the cache).
BUDGET_SECONDS = 0.25
# Past this a text is shown as plain text without trying: markdown-it's first pass over the
# lines costs about 0.4 µs a character before any rule can check the budget, and an ordinary
# text this long does not render within it anyway (a reply may have 400,000, a note 200,000).
MAX_CHARS = 100_000
# A fenced block longer than this is shown escaped, without colours: Pygments takes about
# 1.6 µs a character, in one call the budget cannot interrupt.
HIGHLIGHT_MAX_CHARS = 10_000
# Renderings kept, counted in characters of HTML (about 4 bytes each at most): the pages of a
# long conversation, and the notes, without re-rendering.
CACHE_CHARS = 16_000_000
# Threads for the async renders: enough that one slow text does not hold up the others, few
# enough that replies ending at once do not take every core from the event loop.
RENDER_THREADS = 2

_FORMATTER = HtmlFormatter(nowrap=True, classstyle=True)


class _OverBudget(Exception):
    """The render used its budget: the text is shown as plain text instead."""


class _Deadline(threading.local):
    at: float = float("inf")  # thread CPU time; no render running on this thread: none
    collecting_since: float = 0.0
    new_lexers: int = 0  # lexers this render has loaded (``_lexer``)


_DEADLINE = _Deadline()


def _collection_not_counted(phase: str, info: dict[str, int]) -> None:
    # A collection of the whole heap (the oldest generation) may fall inside a render (about
    # 130 ms in a large process, run by the thread whose allocation set it off): the process's
    # cost, not the text's, so the deadline moves by it, or an ordinary reply could come out as
    # plain text by chance, and be kept so. The young generations hold the render's own
    # objects: their collections count.
    if _DEADLINE.at == float("inf") or info.get("generation") != 2:
        return
    if phase == "start":
        _DEADLINE.collecting_since = time.thread_time()
    else:
        _DEADLINE.at += time.thread_time() - _DEADLINE.collecting_since


gc.callbacks.append(_collection_not_counted)


def _check() -> None:
    if time.thread_time() > _DEADLINE.at:
        raise _OverBudget


def _block_deadline(_state: StateBlock, _start: int, _end: int, _silent: bool) -> bool:
    _check()
    return False  # never matches: the other rules parse the line


def _inline_deadline(_state: StateInline, _silent: bool) -> bool:
    # Also called when a link label is scanned ahead (ParserInline.skipToken), where the
    # time of a run of brackets goes.
    _check()
    return False


def _pairs_deadline(_state: StateInline) -> None:
    _check()


def _core_deadline(_state: StateCore) -> None:
    _check()


def _highlight(code: str, lang: str, _attrs: str) -> str:
    _check()
    if len(code) > HIGHLIGHT_MAX_CHARS:
        return ""  # markdown-it escapes the code itself
    lexer = _lexer(lang.strip().split()[0]) if lang.strip() else None
    if lexer is None:
        return ""
    return highlight(code, lexer, _FORMATTER)


# Lexers by the name a fence gives, once per process (a miss too). A lexer's first use imports
# its module (python 40 ms, the first miss 50 ms): the process's cost, not the text's, so the
# deadline moves by it, or a short reply with code could come out as plain text, and be kept
# so. A render loads at most NEW_LEXERS new ones; later unknown names get no colours.
NEW_LEXERS = 3
_LEXERS: dict[str, Any] = {}
_LEXERS_MAX = 1_000


def _lexer(name: str) -> Any:
    if name in _LEXERS:
        return _LEXERS[name]
    if _DEADLINE.new_lexers >= NEW_LEXERS:
        return None
    _DEADLINE.new_lexers += 1
    started = time.thread_time()
    try:
        lexer = get_lexer_by_name(name)
    except ClassNotFound:
        lexer = None
    _DEADLINE.at += time.thread_time() - started
    if len(_LEXERS) < _LEXERS_MAX:
        _LEXERS[name] = lexer
    return lexer


# The block rules that look for their end at each line (markdown-it's terminator chains).
_TERMINATED = ["paragraph", "reference", "blockquote", "list"]


def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "highlight": _highlight})
    md.enable(["table", "strikethrough"])
    md.use(tasklists_plugin)
    # The budget is checked at every line, every inline position and between the passes: these
    # rules are markdown-it's plugin interface (tests/lib/test_markdown.py proves they run).
    # At the start of each block, and (as a terminator) at each line a paragraph, a quote or a
    # list reads on, where a long paragraph spends its time.
    md.block.ruler.before("table", "deadline", _block_deadline, {"alt": _TERMINATED})
    md.inline.ruler.before("text", "deadline", _inline_deadline)
    md.inline.ruler2.before("balance_pairs", "deadline", _pairs_deadline)
    md.core.ruler.after("inline", "deadline", _core_deadline)
    return md


_MD = _parser()


class _Cache:
    """Renderings by the text's hash, the least recently used dropped past ``CACHE_CHARS``."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._held = 0
        self._items: OrderedDict[bytes, str] = OrderedDict()
        self._lock = threading.Lock()  # the render threads and the request threads share it

    def get(self, key: bytes) -> str | None:
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
            return found

    def put(self, key: bytes, rendered: str) -> None:
        if len(rendered) > self._limit:
            return
        with self._lock:
            old = self._items.pop(key, None)
            self._held += len(rendered) - (len(old) if old is not None else 0)
            self._items[key] = rendered
            while self._held > self._limit:
                _, dropped = self._items.popitem(last=False)
                self._held -= len(dropped)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._held = 0


_CACHE = _Cache(CACHE_CHARS)
_RENDERER = ThreadPoolExecutor(RENDER_THREADS, thread_name_prefix="markdown")


def render_markdown(text: str) -> str:
    """``text`` as sanitised HTML, safe to insert into a page as it is; plain text, escaped, when
    it is too long or too costly to parse. Runs on the caller's thread: not on an event loop."""
    key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    rendered = _CACHE.get(key)
    if rendered is None:
        rendered = _render(text)
        _CACHE.put(key, rendered)
    return rendered


async def render_markdown_async(text: str) -> str:
    """``render_markdown`` on the renderer's threads, so the event loop stays free."""
    return await asyncio.get_running_loop().run_in_executor(_RENDERER, render_markdown, text)


def plain_html(text: str) -> str:
    """``text`` as it is, escaped, in a code block: what a text too costly to render shows."""
    return f"<pre><code>{html_lib.escape(text, quote=False)}</code></pre>\n"


def task_items(text: str) -> list[TaskItem]:
    """The task-list items of ``text`` that render_markdown shows as checkboxes, in their order;
    none when it shows the text plain (too long, or too costly to parse)."""
    if len(text) > MAX_CHARS:
        return []
    env: dict[str, Any] = {}
    _DEADLINE.at = time.thread_time() + BUDGET_SECONDS
    _DEADLINE.new_lexers = 0
    try:
        _MD.parse(text, env)
    except _OverBudget:
        return []
    finally:
        _DEADLINE.at = float("inf")
    return list(env.get("tasks", []))


def _render(text: str) -> str:
    if len(text) > MAX_CHARS:
        return plain_html(text)
    _DEADLINE.at = time.thread_time() + BUDGET_SECONDS
    _DEADLINE.new_lexers = 0
    try:
        tokens = _MD.parse(text)
        html = _MD.renderer.render(tokens, _MD.options, {})
        _check()  # the HTML is written: nh3 then takes about 0.4 µs a character of it
    except _OverBudget:
        return plain_html(text)
    finally:
        _DEADLINE.at = float("inf")
    return nh3.clean(html, **_CLEAN)


_CLEAN: dict[str, Any] = {
    "tags": TAGS,
    "attributes": ATTRIBUTES,
    "url_schemes": URL_SCHEMES,
    "link_rel": "noopener noreferrer nofollow",
    "set_tag_attribute_values": {
        "a": {"target": "_blank"},
        "input": {"type": "checkbox", "disabled": ""},
    },
    "strip_comments": True,
}
