"""Template filters of the owner's pages: ``{{ text|markdown }}``."""

from __future__ import annotations

from django import template
from django.utils.safestring import SafeString, mark_safe

from talorys.lib.markdown import render_markdown

register = template.Library()


@register.filter(name="markdown")
def markdown_filter(text: str | None) -> SafeString:
    """Markdown as sanitised HTML (talorys/lib/markdown.py), safe to insert as it is."""
    return mark_safe(render_markdown(text or ""))  # nh3 has sanitised it
