"""Template tags of the owner's pages: ``{{ text|markdown }}``, ``{{ time|when }}``,
``{% main_nav %}``, ``{{ message|undo_target }}`` and ``{{ task.repeat|repeat_said }}``."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from django import template
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from talorys.lib import timefmt
from talorys.lib.markdown import render_markdown
from talorys.lib.undo import UndoTarget, undo_target
from talorys.lib.when import repeat_said

register = template.Library()


@register.filter(name="markdown")
def markdown_filter(text: str | None) -> SafeString:
    """Markdown as sanitised HTML (talorys/lib/markdown.py), safe to insert as it is."""
    return mark_safe(render_markdown(text or ""))  # nh3 has sanitised it


@register.filter(name="undo_target")
def undo_target_filter(message: Any) -> UndoTarget | None:
    """The binned item a flash message's Undo restores (talorys/lib/undo.py), if it has one."""
    return undo_target(getattr(message, "extra_tags", None))


@register.filter(name="repeat_said")
def repeat_said_filter(schedule: dict[str, Any] | None) -> str:
    """A task's repeat in words, "Every Monday at 08:00" (talorys/lib/when.py); "" for none."""
    return repeat_said(schedule)


WHEN_STYLES = ("full", "relative", "date", "text", "date-text")


@register.filter(name="when")
def when_filter(value: dt.date | None, style: str = "full") -> str:
    """The one way a page shows a time (talorys/lib/timefmt.py), in the owner's zone.

    ``full`` (the default): <time> "1 Dec 2026, 22:14"; ``relative``: <time> "5 min ago" with
    the full time as its title (common.js keeps it fresh); ``date``: <time> "1 Dec 2026";
    ``text`` and ``date-text``: the same as plain text, for attributes and labels.
    """
    if value is None or value == "":
        return ""
    if style not in WHEN_STYLES:
        raise template.TemplateSyntaxError(f"when: unknown style {style!r}")
    moment = value if isinstance(value, dt.datetime) and not style.startswith("date") else None
    full = timefmt.format_datetime(moment) if moment else timefmt.format_date(value)
    if style.endswith("text"):
        return full
    if style == "relative" and moment:
        shown = timefmt.format_relative(moment)
        return format_html(
            '<time datetime="{}" title="{}" data-when="relative">{}</time>',
            timefmt.iso(value),
            full,
            shown,
        )
    return format_html('<time datetime="{}" title="{}">{}</time>', timefmt.iso(value), full, full)


@dataclass(frozen=True)
class NavLink:
    label: str
    url_name: str
    # Other paths that are this page: a conversation (/c/<id>/) is the chat.
    also: tuple[str, ...] = ()


# The header's main navigation, in its order; a new page is added here and nowhere else.
MAIN_NAV = (
    NavLink("Chat", "home", also=("/c/",)),
    NavLink("Tasks", "tasks"),
    NavLink("Projects", "projects"),
    NavLink("Notes", "notes"),
    NavLink("Files", "files"),
    NavLink("Memories", "memories"),
    NavLink("Automations", "automations"),
    NavLink("Approvals", "approvals"),
    NavLink("Changes", "changes"),
    NavLink("Notifications", "notifications"),
    NavLink("Bin", "bin"),
    NavLink("Usage", "usage"),
    NavLink("Backup", "backup", also=("/imports/",)),
    NavLink("Settings", "settings"),
)


def _is_here(path: str, href: str, also: tuple[str, ...]) -> bool:
    # "/" is the chat only, not every page under it; another page owns its whole subtree
    # (/tasks/ and /tasks/7/ are Tasks).
    here = path == href if href == "/" else path.startswith(href)
    return here or path.startswith(also)


@register.inclusion_tag("_nav.html", takes_context=True)
def main_nav(context: template.Context) -> dict[str, Any]:
    """The links of MAIN_NAV, the one for the page being shown marked aria-current."""
    request = context.get("request")  # absent where a template is rendered without one
    path = request.path if request is not None else ""
    links = []
    for link in MAIN_NAV:
        href = reverse(link.url_name)
        links.append(
            {"label": link.label, "href": href, "current": _is_here(path, href, link.also)}
        )
    return {"links": links}
