"""The one Markdown renderer: what it renders, and what it never lets through."""

from __future__ import annotations

import gc
import subprocess
import sys
import time
import uuid
from html.parser import HTMLParser

import pytest
from asgiref.sync import async_to_sync

from benchmarks.markdown_render import PATHOLOGICAL
from talorys.lib.diff import text_diff
from talorys.lib.markdown import (
    _CACHE,
    _DEADLINE,
    BUDGET_SECONDS,
    MAX_CHARS,
    _Cache,
    plain_html,
    render_markdown,
    render_markdown_async,
)
from tests.conftest import ROOT


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


@pytest.mark.parametrize("hostile", list(PATHOLOGICAL))
def test_a_hostile_text_of_the_largest_size_renders_within_its_budget(hostile):
    """Each input that makes markdown-it slow, at the longest size it is tried on: rendered, or
    shown as plain text, within a bound above the budget (thread CPU time, so a busy machine does
    not fail it). Unbounded, ``![`` takes 2.6 s at this size."""
    text = PATHOLOGICAL[hostile](MAX_CHARS)
    _CACHE.clear()
    # Without the process's garbage collections: the test process's own cost (130 ms for a
    # collection of its heap), not the text's.
    gc.disable()
    try:
        started = time.thread_time()
        html = render_markdown(text)
        spent = time.thread_time() - started
    finally:
        gc.enable()
    assert spent < 5 * BUDGET_SECONDS, f"{hostile!r}: {spent * 1000:.0f} ms of CPU"
    # Rendered, or plain; reference definitions alone render to nothing.
    assert html == plain_html(text) or html.startswith("<") or (hostile == "[x]: refs" and not html)


def test_a_one_off_cost_of_the_process_inside_a_render_does_not_leave_it_plain():
    """A collection of the whole heap may fall in any render and use its budget: the render is
    tried again, so an ordinary reply does not come out as plain text by chance (and kept so)."""
    slowed: list[float] = []

    def slow_collection(phase: str, info: dict[str, int]) -> None:
        rendering = _DEADLINE.at != float("inf")
        if phase == "start" and info["generation"] == 2 and rendering and not slowed:
            until = time.thread_time() + BUDGET_SECONDS * 1.2
            while time.thread_time() < until:
                pass
            slowed.append(until)

    _CACHE.clear()
    reply = "## Plan\n\n" + "- a step with **words**\n" * 200
    # So that a collection of the whole heap falls inside the render: CPython runs one once the
    # objects that outlived the young collections are a quarter of those the last one kept, so
    # the heap so far is set aside (freeze) and the last one made to keep next to nothing.
    thresholds = gc.get_threshold()
    gc.freeze()
    gc.collect()
    gc.set_threshold(10, 1, 1)
    gc.callbacks.append(slow_collection)
    try:
        html = render_markdown(reply)
    finally:
        gc.callbacks.remove(slow_collection)
        gc.set_threshold(*thresholds)
        gc.unfreeze()
    assert slowed, "no collection fell inside the render"
    assert html.startswith("<h2>Plan</h2>") and html.count("<strong>") == 200


def test_past_the_budget_the_text_is_shown_as_it_is():
    text = "![" * 10_000 + "<b>"  # about 0.5 s of markdown-it's time
    assert render_markdown(text) == "<pre><code>" + "![" * 10_000 + "&lt;b&gt;</code></pre>\n"
    # An ordinary reply well within it is still Markdown.
    assert render_markdown("**yes** " * 500).startswith("<p><strong>yes</strong>")


def test_a_rendering_is_kept_so_the_next_load_renders_nothing():
    _CACHE.clear()
    reply = "## Plan\n\n" + "- step with `code`\n" * 400
    first = render_markdown(reply)
    # The same object: taken from the cache, not rendered again.
    assert render_markdown(reply) is first
    assert render_markdown(reply + " ") is not first


def test_the_cache_drops_the_least_recently_used_past_its_size():
    cache = _Cache(limit=10)
    for key in (b"a", b"b", b"c"):
        cache.put(key, "1234")
    assert cache.get(b"a") is None  # 12 characters held: the oldest went
    assert cache.get(b"b") == "1234"
    cache.put(b"d", "1234")  # b was used last, so c goes
    assert cache.get(b"c") is None and cache.get(b"b") == "1234"
    cache.put(b"e", "x" * 11)  # bigger than the whole cache: not kept, nothing dropped
    assert cache.get(b"e") is None and cache.get(b"d") == "1234"


def test_the_async_render_gives_the_same_html():
    text = "*async* reply"
    assert async_to_sync(render_markdown_async)(text) == render_markdown(text)


def test_loading_a_lexer_does_not_leave_the_reply_plain():
    """A fresh process's first fence of a language imports its lexer (tens of ms of the
    process's own, past this budget): the second try has it, so the reply is rendered, with
    colours, not plain text kept for good."""
    script = (
        "from talorys.lib import markdown\n"
        "markdown.BUDGET_SECONDS = 0.01\n"
        "print(markdown.render_markdown('# Hi\\n\\n```haskell\\nmain = print 1\\n```'))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert "<h1>Hi</h1>" in done.stdout
    assert '<code class="language-haskell"><span' in done.stdout


def test_fences_of_unknown_languages_are_rendered_without_colours():
    names = [f"made-up-{uuid.uuid4().hex}" for _ in range(5)]
    html = render_markdown("".join(f"```{name}\nx = 1\n```\n\n" for name in names))
    assert html.count("<pre><code") == len(names)  # rendered: a block each, not one plain text
    assert "<span" not in html
