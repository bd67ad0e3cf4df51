"""Markdown to safe HTML: the one renderer for replies, notes and every page that shows them.

markdown-it-py parses CommonMark with tables and strikethrough, with raw HTML *off* (a stored
``<img onerror>`` comes out as text), Pygments highlights fenced code, and nh3 (ammonia) passes
the result through an allow-list, so whatever the parser lets by, no script, event handler,
style or ``javascript:`` link reaches the page. Links open in a new tab without an opener or a
referrer.
"""

from __future__ import annotations

from functools import lru_cache

import nh3
from markdown_it import MarkdownIt
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

TAGS = {
    "p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "strong", "em", "s", "del", "code",
    "pre", "blockquote", "ul", "ol", "li", "a", "table", "thead", "tbody", "tr", "th", "td",
    "span", "div",
}  # fmt: skip
ATTRIBUTES = {
    "a": {"href", "title"},
    "ol": {"start"},
    "span": {"class"},
    "div": {"class"},
    "code": {"class"},
    "pre": {"class"},
}
URL_SCHEMES = {"http", "https", "mailto"}
# Rendering is pure, so the same short text (a reply, most notes) is rendered once per process.
# Longer texts are rendered each time: 2,048 notes of 200,000 characters, kept with their HTML,
# would hold gigabytes.
CACHE_SIZE = 2048
CACHED_CHARS = 8_000
# Text past this is shown as plain text in a code block: parsing and highlighting a megabyte of
# Markdown for every page view is not worth it (replies and notes are capped well below it).
MAX_CHARS = 200_000

_FORMATTER = HtmlFormatter(nowrap=True, classstyle=True)


def _highlight(code: str, lang: str, _attrs: str) -> str:
    try:
        lexer = get_lexer_by_name(lang.strip().split()[0]) if lang.strip() else None
    except ClassNotFound:
        lexer = None
    if lexer is None:
        return ""  # markdown-it escapes the code itself
    return highlight(code, lexer, _FORMATTER)


def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "highlight": _highlight})
    md.enable(["table", "strikethrough"])
    return md


_MD = _parser()


def render_markdown(text: str) -> str:
    """``text`` as sanitised HTML, safe to insert into a page as it is."""
    return _render_cached(text) if len(text) <= CACHED_CHARS else _render(text)


@lru_cache(maxsize=CACHE_SIZE)
def _render_cached(text: str) -> str:
    return _render(text)


def _render(text: str) -> str:
    if len(text) > MAX_CHARS:
        text = "~~~~~~~~\n" + text.replace("~~~~~~~~", "~ ~ ~ ~") + "\n~~~~~~~~"
    html = _MD.render(text)
    return nh3.clean(
        html,
        tags=TAGS,
        attributes=ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        link_rel="noopener noreferrer nofollow",
        set_tag_attribute_values={"a": {"target": "_blank"}},
        strip_comments=True,
    )
