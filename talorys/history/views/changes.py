"""``/changes/``: what the assistant changed (``change_list``: in chat or a scheduled
run) and what a backup import changed, newest first, each with what it changed and Revert (``change_revert``, as
POST /api/changes/<id>/revert). A change that can no longer be reverted says why
(``refusals.change_revert_refusals``, the rule the revert itself applies)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import FieldDoesNotExist
from django.db import models
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import NoReverseMatch, reverse

from talorys.history.changes import change_revert
from talorys.history.kinds import item_kind, item_kinds, rows_of
from talorys.history.models import Change
from talorys.history.refusals import change_revert_refusals
from talorys.history.selectors import change_list
from talorys.lib.diff import DiffRun, text_diff
from talorys.lib.errors import NotFound, ValidationFailed
from talorys.lib.timefmt import format_datetime
from talorys.lib.validation import clip
from talorys.web.pages import owner_page, page_of, page_problem, run_action, whole_number

BACK = "/changes/"
# What each action did to the item, as the list says it.
ACTION_LABELS = {
    Change.Action.CREATE: "Created",
    Change.Action.UPDATE: "Edited",
    Change.Action.DELETE: "Moved to the bin",
    Change.Action.RESTORE: "Restored from the bin",
}


@dataclass(frozen=True)
class FieldChange:
    label: str
    runs: list[DiffRun] | None = None  # a text field: the word diff
    old: str = ""  # any other field: its value before and after
    new: str = ""
    # A reference to another item: its page, shown as a link on its title.
    old_href: str = ""
    new_href: str = ""


@dataclass(frozen=True)
class ChangeRow:
    change: Change
    action: str
    by: str
    fields: list[FieldChange] = field(default_factory=list)
    refusal: str = ""  # why it cannot be reverted, if it cannot


def _model_field(kind: str, name: str) -> models.Field | None:
    try:
        found = item_kind(kind).model._meta.get_field(name)
    except (NotFound, FieldDoesNotExist):  # a kind no longer kept, or a field since removed
        return None
    return found if isinstance(found, models.Field) else None


NONE = "none"
TITLE_SHOWN = 80


def _item(model_field: models.ForeignKey, pk: Any) -> tuple[str, str]:
    """A reference as the owner knows it: the item's title in quotes and its page, or words
    when it is gone; never the raw id."""
    related = model_field.related_model
    kind = next((k for k in item_kinds() if k.model is related), None)
    if isinstance(related, str):  # "self", resolved by Django before any query
        return "an item", ""
    try:
        rows = rows_of(related) if kind else related._default_manager.all()
        obj = rows.filter(pk=pk).first()
    except (TypeError, ValueError):  # not an id (a hand edit)
        obj = None
    if obj is None:
        return "an item since deleted for good", ""
    title = clip(kind.title(obj) if kind else str(obj), TITLE_SHOWN)
    try:
        href = reverse(kind.name, args=[obj.pk]) if kind else ""
    except NoReverseMatch:  # a kind without a page of its own
        href = ""
    return f"“{title}”", href


def _shown(value: Any, model_field: models.Field | None) -> tuple[str, str]:
    """A field's value in words, and the page it leads to (for a reference)."""
    if value is None or value == "":
        return NONE, ""
    if isinstance(model_field, models.ForeignKey):
        return _item(model_field, value)
    if isinstance(model_field, models.DateTimeField) and isinstance(value, str):
        try:
            return format_datetime(dt.datetime.fromisoformat(value)), ""
        except ValueError:
            return value, ""
    if isinstance(value, bool):
        return ("yes" if value else "no"), ""
    return str(value), ""


def field_changes(change: Change) -> list[FieldChange]:
    """Each content field the change wrote: a word diff for text, "old → new" for the rest.

    A move to the bin or out of it changes no content, so it lists nothing; a creation lists
    the fields it filled."""
    if change.action in (Change.Action.DELETE, Change.Action.RESTORE):
        return []
    before, after = change.before or {}, change.after or {}
    shown: list[FieldChange] = []
    for name in dict.fromkeys([*before, *after]):
        old, new = before.get(name), after.get(name)
        if old == new or (change.action == Change.Action.CREATE and new in (None, "")):
            continue
        model_field = _model_field(change.kind, name)
        label = name.removesuffix("_id").replace("_", " ").capitalize()
        is_text = isinstance(model_field, models.CharField | models.TextField) and not getattr(
            model_field, "choices", None
        )
        if is_text and isinstance(old or "", str) and isinstance(new or "", str):
            shown.append(FieldChange(label=label, runs=text_diff(old or "", new or "")))
        else:
            old_text, old_href = _shown(old, model_field)
            new_text, new_href = _shown(new, model_field)
            shown.append(FieldChange(label, None, old_text, new_text, old_href, new_href))
    return shown


def _by(source: str) -> str:
    if source == "chat":
        return "in chat"
    if source.startswith("automation:"):
        return f"by automation {source.removeprefix('automation:')} (scheduled)"
    if source == "import":
        return "by a backup import"
    if source.startswith("mcp:"):
        return f"by an MCP client (token {source.removeprefix('mcp:')}…)"
    return f"by {source}"


def _revert(request: HttpRequest) -> str:
    change_id = whole_number(request.POST, "change_id", label="Change")
    if change_id is None:
        raise ValidationFailed("Say which change to revert.")
    made = change_revert(change_id=change_id)
    return "Reverted." if made else "Nothing needed reverting."


@owner_page("GET", "POST")
def changes_page(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        return run_action(request, lambda: _revert(request), back=BACK, done=lambda said: said)
    page = page_of(request, change_list())
    changes = list(page.object_list)
    refusals = change_revert_refusals(changes)
    rows = [
        ChangeRow(
            change=change,
            action=ACTION_LABELS.get(change.action, change.action),
            by=_by(change.source),
            fields=field_changes(change),
            refusal=refusals.get(change.pk, ""),
        )
        for change in changes
    ]
    return render(
        request,
        "history/changes.html",
        {"page": page, "rows": rows, "problem": page_problem(request)},
    )
