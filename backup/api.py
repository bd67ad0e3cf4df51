"""/api/backup: export (the owner's session, or a token: read scope is enough) and import (the
owner's session only: an import changes everything)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIRequest
from django.http import HttpRequest, StreamingHttpResponse
from ninja import Router, Schema

from backup.export import export_filename
from backup.services import backup_export, backup_import
from talorys.accounts.auth import owner_session_auth
from talorys.lib.errors import ValidationFailed

backup_router = Router(tags=["backup"])

CONTENT_TYPE = "application/json"


class Counts(Schema):
    added: int
    changed: int
    unchanged: int
    kept: int


class ImportOut(Schema):
    dry_run: bool
    created_at: str
    app_version: str
    kinds: dict[str, Counts]


async def _pieces(pieces: Iterator[bytes]) -> AsyncIterator[bytes]:
    # Under ASGI Django would read a sync iterator to the end before sending anything; each piece
    # is read on the request's own thread (thread_sensitive), where its database cursor lives.
    step = sync_to_async(_next_piece, thread_sensitive=True)
    while (piece := await step(pieces)) is not None:
        yield piece


def _next_piece(pieces: Iterator[bytes]) -> bytes | None:
    return next(pieces, None)


def export_response(request: HttpRequest) -> StreamingHttpResponse:
    """The backup document as a download, streamed (the API and the page both answer this)."""
    pieces = backup_export()
    content = _pieces(pieces) if isinstance(request, ASGIRequest) else pieces
    response = StreamingHttpResponse(content, content_type=CONTENT_TYPE)
    response["Content-Disposition"] = f'attachment; filename="{export_filename()}"'
    response["Cache-Control"] = "no-store"
    return response


@backup_router.get("/export", response={200: None})
def export(request: HttpRequest) -> StreamingHttpResponse:
    """The whole backup as one JSON document (backup/format.py), streamed. No secrets in it."""
    return export_response(request)


def uploaded_backup(request: HttpRequest) -> bytes:
    """The backup a request carries: a multipart ``file``, or the raw JSON body."""
    if request.content_type == "multipart/form-data":
        upload = request.FILES.get("file")
        if upload is None:
            raise ValidationFailed("Choose a backup file to import (the form field is “file”).")
        return upload.read()
    if not request.body:
        raise ValidationFailed("The request has no backup: send the JSON document as the body.")
    return request.body


@backup_router.post("/import", response=ImportOut, auth=owner_session_auth)
def import_backup(request: HttpRequest, dry_run: bool = False) -> dict:
    """Import a backup: merged by id in one transaction; ``dry_run=1`` only says what it would
    add, change and leave alone. Anything wrong with the file is a 422 and changes nothing."""
    return dict(backup_import(raw=uploaded_backup(request), dry_run=dry_run))
