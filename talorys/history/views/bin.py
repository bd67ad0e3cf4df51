"""``/bin/``: every deleted item of every kind (the list /api/bin shows, read a page at a time:
``bin_items.BinItems``), with the days each has left; restore one, purge one for good, or empty the bin. The same
services as the /api/bin routes; purging is the owner's session only, which a page always is."""

from __future__ import annotations

import math
from dataclasses import dataclass

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone

from talorys.history.bin import BIN_RETENTION, bin_empty, bin_purge, bin_restore
from talorys.history.bin_items import BinItem, BinItems
from talorys.history.kinds import item_kind
from talorys.lib.errors import ValidationFailed
from talorys.web.pages import form_text, owner_page, page_of, page_problem, run_action, whole_number

BACK = "/bin/"


@dataclass(frozen=True)
class BinRow:
    item: BinItem
    days_left: int  # whole days before beat purges it (0: at the next purge)


def _rows(items: list[BinItem]) -> list[BinRow]:
    now = timezone.now()
    rows = []
    for item in items:
        left = (item.deleted_at + BIN_RETENTION - now).total_seconds() / 86400
        rows.append(BinRow(item=item, days_left=max(0, math.ceil(left))))
    return rows


def _target(request: HttpRequest) -> tuple[str, int]:
    kind = form_text(request, "kind")
    pk = whole_number(request.POST, "id", label="Item")
    if not kind or pk is None:
        raise ValidationFailed("Say which item: its kind and id.")
    item_kind(kind)  # NotFound names the kinds there are
    return kind, pk


def _restore(request: HttpRequest) -> str:
    kind, pk = _target(request)
    bin_restore(kind=kind, pk=pk)
    return f"The {kind} is back where it was."


def _purge(request: HttpRequest) -> str:
    kind, pk = _target(request)
    bin_purge(kind=kind, pk=pk)
    return f"The {kind} was deleted for good."


def _empty(request: HttpRequest) -> str:
    purged = bin_empty()
    return f"The bin is empty: {purged} item{'' if purged == 1 else 's'} deleted for good."


ACTIONS = {"restore": _restore, "purge": _purge, "empty": _empty}


@owner_page("GET", "POST")
def bin_page(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        action = ACTIONS.get(form_text(request, "action"))
        if action is None:
            return run_action(request, _unknown_action, back=BACK)
        return run_action(request, lambda: action(request), back=BACK, done=lambda said: said)
    page = page_of(request, BinItems())
    return render(
        request,
        "history/bin.html",
        {
            "page": page,
            "rows": _rows(list(page.object_list)),
            "retention_days": BIN_RETENTION.days,
            "problem": page_problem(request),
        },
    )


def _unknown_action() -> None:
    raise ValidationFailed("Unknown action: restore, purge or empty.")
