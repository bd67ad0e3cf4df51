"""/api/files: upload, list, read, download and bin the owner's files. A token with the read
scope reads; uploading and deleting need the write scope (talorys/accounts/auth.py)."""

from django.db.models import QuerySet
from django.http import FileResponse, HttpRequest
from ninja import File as Upload
from ninja import Query, Router, Status, UploadedFile
from ninja.pagination import paginate

from files import selectors, services, storage
from files.models import File
from files.schemas import FileFilters, FileOut
from talorys.accounts.auth import request_actor
from talorys.lib.errors import NotFound
from talorys.web.pagination import Pagination
from talorys.web.schemas import ErrorOut

router = Router(tags=["files"])

# Shown in the browser: a PDF (its viewer opens at #page=N) and the accepted images. Anything
# else, HTML above all, is a download: an uploaded page never runs as ours.
INLINE_TYPES = {"application/pdf", "image/png", "image/jpeg", "image/gif", "image/webp"}


@router.post("", response={201: FileOut, 415: ErrorOut})
def file_upload(request: HttpRequest, file: Upload[UploadedFile]) -> Status:
    """Upload one file (multipart, field ``file``). 201 with status ``pending`` while the
    worker reads its text (``ready`` at once for an image); 413 past the size limits, 415 for
    a type Talorys does not accept or a name that does not match the content."""
    created = services.file_create(name=file.name or "", stream=file, actor=request_actor(request))
    return Status(201, created)


@router.get("", response=list[FileOut])
@paginate(Pagination)
def file_list(request: HttpRequest, filters: Query[FileFilters]) -> QuerySet[File]:
    return selectors.files_list(q=filters.q, status=filters.status)


@router.get("/{int:file_id}", response=FileOut)
def file_get(request: HttpRequest, file_id: int) -> File:
    return selectors.file_get(file_id=file_id)


@router.get("/{int:file_id}/content", response={200: None})
def file_content(request: HttpRequest, file_id: int) -> FileResponse:
    """The bytes as uploaded, with the sniffed type; a PDF or an image is shown inline,
    anything else downloads."""
    file = selectors.file_get(file_id=file_id)
    try:
        content = storage.files_storage().open(storage.blob_name(file.sha256), "rb")
    except FileNotFoundError as error:  # lost from storage here (a restore without it)
        raise NotFound(f"The content of file {file_id} is missing from storage.") from error
    response = FileResponse(
        content,
        content_type=file.content_type,
        as_attachment=file.content_type not in INLINE_TYPES,
        filename=file.name,
    )
    response["X-Content-Type-Options"] = "nosniff"
    response["Cache-Control"] = "private, max-age=3600"
    return response


@router.delete("/{int:file_id}", response={204: None})
def file_delete(request: HttpRequest, file_id: int) -> Status:
    """To the bin for 30 days, restorable (/api/bin/file/{id}/restore)."""
    services.file_delete(file_id=file_id, actor=request_actor(request))
    return Status(204, None)
