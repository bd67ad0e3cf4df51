"""The one Markdown renderer: what it renders, and what it never lets through."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from talorys.lib.diff import text_diff
from talorys.lib.markdown import MAX_CHARS, render_markdown


def test_headings_emphasis_tables_code_and_links_are_rendered():
    html = render_markdown(
        "## Autumn\n\n**bold** and *it*\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"
        "```python\ndef f():\n    return 1\n```\n\n[site](https://example.org)"
    )
    assert "<h2>Autumn</h2>" in html
    assert "<strong>bold</strong>" in html and "<em>it</em>" in html
    assert "<table>" in html and "<td>1</td>" in html
    assert '<pre><code class="language-python"><span class="k">def</span>' in html
    assert 'href="https://example.org"' in html
    assert 'target="_blank"' in html and 'rel="noopener noreferrer nofollow"' in html


@pytest.mark.parametrize(
    "hostile",
    [
        '<img src=x onerror="alert(1)">',
        "<script>alert(1)</script>",
        '<a href="javascript:alert(1)">x</a>',
        "[x](javascript:alert(1))",
        "[x](data:text/html;base64,PHNjcmlwdD4=)",
        '<div style="position:fixed">x</div>',
        "![x](https://evil.example/t.png)",
        '<iframe src="https://evil.example"></iframe>',
        "```\n</code></pre><img src=x onerror=alert(1)>\n```",
    ],
)
def test_hostile_markup_comes_out_inert(hostile):
    elements = parsed(render_markdown(hostile))
    assert {tag for tag, _ in elements} <= {"p", "a", "pre", "code"}
    for _tag, attrs in elements:
        assert not any(name.startswith("on") or name == "style" for name in attrs)
        assert not any(v and v.lower().startswith(("javascript:", "data:")) for v in attrs.values())


def parsed(html: str) -> list[tuple[str, dict[str, str | None]]]:
    """Every element of ``html`` with its attributes, as a browser's parser sees them."""
    found: list[tuple[str, dict[str, str | None]]] = []

    class Collect(HTMLParser):
        def handle_starttag(self, tag, attrs):
            found.append((tag, dict(attrs)))

    Collect().feed(html)
    return found


def test_raw_html_is_shown_as_text():
    assert "&lt;img src=x" in render_markdown('<img src=x onerror="alert(1)">')


def test_a_huge_text_is_shown_as_one_code_block_and_not_parsed():
    html = render_markdown("**x** " * (MAX_CHARS // 5))
    assert html.startswith("<pre><code>") and "<strong>" not in html


def test_the_word_diff_gives_back_both_texts():
    before, after = "Buy milk and eggs today", "Buy oat milk and bread today"
    runs = text_diff(before, after)
    assert "".join(r["text"] for r in runs if r["op"] != "ins") == before
    assert "".join(r["text"] for r in runs if r["op"] != "del") == after
    assert {"op": "ins", "text": "bread"} in runs and {"op": "del", "text": "eggs"} in runs
    assert text_diff("same", "same") == [{"op": "eq", "text": "same"}]


def test_only_short_texts_are_kept_in_the_cache():
    from talorys.lib.markdown import CACHED_CHARS, _render_cached

    _render_cached.cache_clear()
    short, long = "**short**", "word " * (CACHED_CHARS // 5 + 1)
    assert render_markdown(short) == render_markdown(short) == "<p><strong>short</strong></p>\n"
    assert render_markdown(long).startswith("<p>word word")
    assert _render_cached.cache_info().currsize == 1
