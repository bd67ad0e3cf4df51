"""/api/imports: import another tool's export (the owner's session only: it adds data in bulk,
like a backup import), with ``dry_run`` as its preview; list past imports and follow one's
indexing (a token's read scope is enough). Reverting one is the change log's
(/api/changes/{id}/revert) and the bin's (/api/bin/import/{id})."""

from __future__ import annotations

from django.db.models import QuerySet
from django.http import HttpRequest
from ninja import Router
from ninja.pagination import paginate

from imports import selectors, services
from imports.models import ImportRun
from imports.schemas import ImportOut, ImportReportOut
from talorys.accounts.auth import owner_session_auth
from talorys.lib.errors import ValidationFailed
from talorys.web.pagination import Pagination

imports_router = Router(tags=["imports"])


@imports_router.post("", response=ImportReportOut, auth=owner_session_auth)
def import_create(request: HttpRequest, dry_run: bool = False) -> services.ImportReport:
    """Import the multipart ``file``: one transaction; ``dry_run=true`` only says what it holds
    and would add. A file that is not an export Talorys reads is a 422 and changes nothing."""
    upload = request.FILES.get("file")
    if upload is None or upload.file is None:
        raise ValidationFailed("Choose an export to import (the form field is “file”).")
    return services.import_file(stream=upload.file, name=upload.name or "", dry_run=dry_run)


@imports_router.get("", response=list[ImportOut])
@paginate(Pagination)
def import_list(request: HttpRequest) -> QuerySet[ImportRun]:
    return selectors.import_list()


@imports_router.get("/{int:import_id}", response=ImportOut)
def import_get(request: HttpRequest, import_id: int) -> ImportRun:
    return selectors.import_get(import_id=import_id)
