"""Markdown to safe HTML: the one renderer for replies, notes and every page that shows them.

markdown-it-py parses CommonMark with tables, strikethrough and task lists (talorys/lib/tasklists.py:
"- [ ] cheese" as a checkbox), with raw HTML *off* (a stored
``<img onerror>`` comes out as text), Pygments highlights fenced code, and nh3 (ammonia) passes
the result through an allow-list, so whatever the parser lets by, no script, event handler,
style or ``javascript:`` link reaches the page. Links open in a new tab without an opener or a
referrer.

A render is bounded, and benchmarks/markdown_render.py is the measurement that keeps the bound.
markdown-it-py is linear on every hostile input found (with ``MAX_NESTING``, its own limit),
but pure Python: a run of ``![`` costs about 30 µs a character (3.2 s of CPU at ``MAX_CHARS``),
an ordinary reply 4 µs. cmark-gfm (``cmarkgfm``) is linear too, 8-250 times faster with nh3
after it, but not used: its binding frees nothing it allocates (190 MB kept after 100 renders
of 50,000 characters), it has no nesting limit (nh3 then takes 100 s over 100,000 ``>``), and
it gives no syntax tree (the task list's source lines, raw HTML shown as text). So a render
that has used ``BUDGET_SECONDS`` of its thread's CPU time stops; it is tried once more if that
try paid one of the process's own one-off costs (a collection of the whole heap, about 130 ms in
a large process, or a lexer's first import), so an ordinary reply does not come out plain by
chance; otherwise, or if the second stops too, the text is shown as it is, escaped, in a code
block; so is a text past ``MAX_CHARS``, without trying. Each rendering, either kind, is kept
(``CACHE_CHARS`` of HTML, by the text's hash), so the next page load of a conversation renders
nothing. Async callers use ``render_markdown_async``: the render runs on ``RENDER_THREADS``
threads of its own, never on the event loop.
"""

from __future__ import annotations

import asyncio
import functools
import gc
import hashlib
import html as html_lib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import nh3
from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock
from markdown_it.rules_core import StateCore
from markdown_it.rules_inline import StateInline
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
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
# Thread CPU time one try of a render may use. An ordinary text of about 60,000 characters fits
# (2.5-4.5 µs a character): a long note or reply keeps its formatting. Each hostile input
# found stops within 250-560 ms at ``MAX_CHARS`` (benchmarks/markdown_render.py, the budget and
# the step running, once or twice: ``ATTEMPTS``). It runs off the event loop, once per text.
BUDGET_SECONDS = 0.25
# Past this a text is shown as plain text without trying: markdown-it's first pass over the
# lines costs about 0.4 µs a character before any rule can check the budget, and an ordinary
# text this long does not render within it anyway (a reply may have 400,000, a note 200,000).
MAX_CHARS = 100_000
# Lists, quotes and links nested deeper than this are not parsed further (the text past them is
# dropped): markdown-it's own limit, the commonmark preset's value. The parser recurses once per
# level: at 1,000 a run of ">" raises RecursionError instead of rendering.
MAX_NESTING = 20
# A fenced block longer than this is shown escaped, without colours: Pygments takes about
# 1.6 µs a character, in one call the budget cannot interrupt.
HIGHLIGHT_MAX_CHARS = 10_000
# Tries within the budget before the text is shown plain: a second only when the first paid one
# of the process's one-off costs (``_one_off_costs``). A hostile text costs one budget, or two
# when it sets off a collection of the whole heap itself (the runs of ``*a``, ``_a``, ``a\n\n``
# in benchmarks/markdown_render.py): about 0.5 s of CPU, once (the cache).
ATTEMPTS = 2
# Renderings kept, counted in characters of HTML (about 4 bytes each at most): the pages of a
# long conversation, and the notes, without re-rendering.
CACHE_CHARS = 16_000_000
# Threads for the async renders: enough that one slow text does not hold up the others, few
# enough that replies ending at once do not take every core from the event loop.
RENDER_THREADS = 2

_FORMATTER = HtmlFormatter(nowrap=True, classstyle=True)


class _OverBudget(Exception):
    """The render used its budget: tried again, or shown as plain text."""


class _Deadline(threading.local):
    at: float = float("inf")  # thread CPU time; no render running on this thread: none


_DEADLINE = _Deadline()


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


def _pass_deadline(_state: StateInline | StateCore) -> None:
    _check()


def _highlight(code: str, lang: str, _attrs: str) -> str:
    _check()
    if len(code) > HIGHLIGHT_MAX_CHARS:
        return ""  # markdown-it escapes the code itself
    lexer = _lexer(lang.strip().split()[0]) if lang.strip() else None
    if lexer is None:
        return ""
    return highlight(code, lexer, _FORMATTER)


@functools.lru_cache(maxsize=1_000)
def _lexer(name: str) -> Lexer | None:
    """The lexer a fence names, or None, once per process: a lexer's first use imports its
    module (python 40 ms, the first unknown name 150 ms), later ones take microseconds."""
    try:
        return get_lexer_by_name(name)
    except ClassNotFound:
        return None


# The block rules that look for their end at each line (markdown-it's terminator chains).
_TERMINATED = ["paragraph", "reference", "blockquote", "list"]


def _parser() -> MarkdownIt:
    options = {"html": False, "linkify": False, "highlight": _highlight, "maxNesting": MAX_NESTING}
    md = MarkdownIt("commonmark", options)
    md.enable(["table", "strikethrough"])
    md.use(tasklists_plugin)
    # The budget is checked at every line, every inline position and between the passes: these
    # rules are markdown-it's plugin interface (tests/lib/test_markdown.py proves they run).
    # At the start of each block, and (as a terminator) at each line a paragraph, a quote or a
    # list reads on, where a long paragraph spends its time.
    md.block.ruler.before("table", "deadline", _block_deadline, {"alt": _TERMINATED})
    md.inline.ruler.before("text", "deadline", _inline_deadline)
    md.inline.ruler2.before("balance_pairs", "deadline", _pass_deadline)
    md.core.ruler.after("inline", "deadline", _pass_deadline)
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
    if _bounded(lambda: _MD.parse(text, env)) is None:
        return []
    return list(env.get("tasks", []))


def _render(text: str) -> str:
    if len(text) > MAX_CHARS:
        return plain_html(text)
    html = _bounded(lambda: _MD.renderer.render(_MD.parse(text), _MD.options, {}))
    if html is None:
        return plain_html(text)
    return nh3.clean(html, **_CLEAN)  # about 0.4 µs a character of HTML


_T = TypeVar("_T")


def _bounded(work: Callable[[], _T]) -> _T | None:
    """``work()`` within ``BUDGET_SECONDS`` of this thread's CPU time; None when it used it all,
    in a try that paid none of the process's one-off costs or in the last one."""
    for _ in range(ATTEMPTS):
        costs = _one_off_costs()
        _DEADLINE.at = time.thread_time() + BUDGET_SECONDS
        try:
            done = work()
            _check()  # the last step may have run past it
        except _OverBudget:
            if _one_off_costs() == costs:
                return None  # the text's own cost: a second try would use the budget again
            continue
        finally:
            _DEADLINE.at = float("inf")
        return done
    return None


def _one_off_costs() -> tuple[int, int]:
    """Collections of the whole heap and lexer lookups not yet cached, so far, in the process:
    the costs a render may pay that are not the text's (counters read, not a hook in the
    collector; another thread's collection counts too, and only buys a second try)."""
    return gc.get_stats()[2]["collections"], _lexer.cache_info().misses


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
