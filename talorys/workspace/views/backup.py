"""``/backup/``: export and import, once the backup API exists (issue 12). Until then the page
says what backup will do and offers nothing that would not work: no button here reaches an
endpoint that is not there."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from talorys.lib.pages import owner_page
from talorys.workspace.history import BIN_RETENTION


@owner_page("GET")
def backup_page(request: HttpRequest) -> HttpResponse:
    return render(request, "workspace/backup.html", {"retention_days": BIN_RETENTION.days})
