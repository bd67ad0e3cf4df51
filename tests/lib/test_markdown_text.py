"""Markdown as readable plain text (talorys/lib/markdown_text.py): no formatting marks left, the
structure kept as lines, raw HTML and entities as the text they are."""

from __future__ import annotations

from talorys.lib.markdown_text import markdown_to_text


def test_a_briefing_reads_as_plain_text():
    briefing = (
        "## Today\n\nYou have **three** *big* things:\n\n- **Dentist** at 10:00\n"
        "- Call [Sam](https://example.org/sam)\n  - bring `notes`\n\n1. first\n2. second\n\n"
        "| task | due |\n| --- | --- |\n| Tax | Fri |\n\n```\nx = 1\ny = 2\n```\n\n"
        "- [ ] buy milk\n- [x] post\n\n> quoted\n\nA <b>tag</b> &amp; more\nsame line  \nnew line"
    )
    assert markdown_to_text(briefing) == (
        "Today\n\nYou have three big things:\n\n- Dentist at 10:00\n"
        "- Call Sam (https://example.org/sam)\n  - bring notes\n\n1. first\n2. second\n\n"
        "task | due\nTax | Fri\n\nx = 1\ny = 2\n\n- [ ] buy milk\n- [x] post\n\nquoted\n\n"
        "A <b>tag</b> & more\nsame line\nnew line"
    )


def test_plain_words_stay_as_they_are():
    assert markdown_to_text("About Friday") == "About Friday"
    assert markdown_to_text("") == ""
    assert markdown_to_text("See https://example.org/x") == "See https://example.org/x"
