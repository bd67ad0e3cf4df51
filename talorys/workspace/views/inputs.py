"""What the tasks, projects and notes pages read from a form or a query string.

A field that is there but wrong is refused with a message (ValidationFailed, shown above the
page by ``run_action``), never read as empty: "project=abc" must not clear a task's project.
"""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

from django.http import HttpRequest, QueryDict

from talorys.lib.errors import ValidationFailed
from talorys.lib.pages import form_text
from talorys.lib.validation import local_datetime


def whole_number(data: QueryDict, name: str, *, label: str) -> int | None:
    """A positive whole number (an id), None when the field is empty or missing."""
    value = (data.get(name) or "").strip()
    if not value:
        return None
    if not value.isdigit() or not 0 < int(value) < 2**63:
        raise ValidationFailed(f"{label}: “{value[:40]}” is not an id.")
    return int(value)


def owner_zone_of(request: HttpRequest) -> ZoneInfo:
    """The owner's zone, kept on the request for every signed-in page (workspace middleware)."""
    return ZoneInfo(request.owner_settings.time_zone)  # type: ignore[attr-defined]


def form_when(request: HttpRequest, name: str, *, label: str) -> dt.datetime | None:
    """A ``datetime-local`` field, a wall-clock time in the owner's zone."""
    return local_datetime(form_text(request, name), owner_zone_of(request), field=label)


def page_problem(request: HttpRequest) -> str:
    """What is wrong with ``?page=``, or "" (the list then shows page 1 or its last page)."""
    value = request.GET.get("page", "")
    if value and not value.isdigit():
        return f"“{value[:40]}” is not a page number; this is page 1."
    return ""
