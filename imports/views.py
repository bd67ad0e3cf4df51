"""``/imports/``: bring in another tool's export, linked from the backup page.

The file is chosen once: the page's script sends it to ``POST /api/imports?dry_run=true`` and
shows the preview (the kind, the counts, the first titles, what is here already), then sends the
same file again without ``dry_run`` when the owner presses Import (static/talorys/js/
imports.js). Below, the past imports, each with Revert (``/imports/{id}/revert/``: the change
log's revert of the import's entry, which moves what it added to the bin).
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from imports.selectors import import_list
from imports.services import import_revert
from talorys.history.bin import BIN_RETENTION
from talorys.web.pages import owner_page, page_of, run_action

PAGE = "/imports/"


@owner_page("GET")
def imports_page(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "imports/imports.html",
        {
            "page": page_of(request, import_list()),
            "max_mb": settings.MAX_CHAT_IMPORT_BYTES // (1024 * 1024),
            "retention_days": BIN_RETENTION.days,
        },
    )


@owner_page("POST")
def import_revert_page(request: HttpRequest, import_id: int) -> HttpResponse:
    return run_action(
        request,
        lambda: import_revert(import_id=import_id),
        back=PAGE,
        done="Import reverted: what it added is in the bin, where you can restore it.",
    )
