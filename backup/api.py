"""/api/backup: export (the owner's session, or a token: read scope is enough) and import (the
owner's session only: an import changes everything)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from typing import IO

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIRequest
from django.http import HttpRequest, StreamingHttpResponse
from ninja import Router, Schema

from backup.export import export_filename
from backup.services import backup_export, backup_import, origin_text
from talorys.accounts.auth import owner_session_auth
from talorys.lib.errors import ValidationFailed

backup_router = Router(tags=["backup"])

CONTENT_TYPE = "application/json"
# A raw body up to this size stays in memory; a larger one goes to a temporary file.
SPOOL_IN_MEMORY = 1024 * 1024
COPY_BYTES = 64 * 1024


class Counts(Schema):
    added: int
    changed: int
    unchanged: int
    kept: int


class ImportOut(Schema):
    dry_run: bool
    created_at: str
    app_version: str
    # True: signed by this installation (exported here, unchanged since). False: made elsewhere,
    # or edited or forged (the checksum alone proves nothing: anyone can recompute it).
    made_here: bool
    origin: str  # the same, in words for a person
    kinds: dict[str, Counts]


async def _pieces(pieces: Iterator[bytes]) -> AsyncIterator[bytes]:
    # Under ASGI Django would read a sync iterator to the end before sending anything; each piece
    # is read on the request's own thread (thread_sensitive), where its database cursor lives.
    step = sync_to_async(_next_piece, thread_sensitive=True)
    while (piece := await step(pieces)) is not None:
        yield piece


def _next_piece(pieces: Iterator[bytes]) -> bytes | None:
    return next(pieces, None)


@backup_router.get("/export", response={200: None})
def export(request: HttpRequest) -> StreamingHttpResponse:
    """The whole backup as one JSON document (backup/format.py), streamed. No secrets in it."""
    pieces = backup_export()
    content = _pieces(pieces) if isinstance(request, ASGIRequest) else pieces
    response = StreamingHttpResponse(content, content_type=CONTENT_TYPE)
    response["Content-Disposition"] = f'attachment; filename="{export_filename()}"'
    response["Cache-Control"] = "no-store"
    return response


def uploaded_backup(request: HttpRequest) -> IO[bytes]:
    """The backup a request carries, as a file the import reads twice: a multipart ``file``
    (Django keeps a large one on disk), or the raw JSON body, copied to a temporary file a
    piece at a time (never the whole body in memory)."""
    if request.content_type == "multipart/form-data":
        upload = request.FILES.get("file")
        if upload is None or upload.file is None:
            raise ValidationFailed("Choose a backup file to import (the form field is “file”).")
        return upload.file
    # Closed by the caller (the handler's ``with``).
    spooled = tempfile.SpooledTemporaryFile(max_size=SPOOL_IN_MEMORY)  # noqa: SIM115
    shutil.copyfileobj(request, spooled, COPY_BYTES)
    if not spooled.tell():
        raise ValidationFailed("The request has no backup: send the JSON document as the body.")
    return spooled


@backup_router.post("/import", response=ImportOut, auth=owner_session_auth)
def import_backup(request: HttpRequest, dry_run: bool = False) -> dict:
    """Import a backup: merged by id in one transaction; ``dry_run=1`` only says what it would
    add, change and leave alone. Anything wrong with the file is a 422 and changes nothing."""
    with uploaded_backup(request) as source:
        report = backup_import(source=source, dry_run=dry_run)
    return dict(report) | {"origin": origin_text(report["made_here"])}
