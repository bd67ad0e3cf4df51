"""/api/files: upload, list, read, download and bin the owner's files. A token with the read
scope reads; uploading and deleting need the write scope (talorys/accounts/auth.py)."""

from django.db.models import QuerySet
from django.http import FileResponse, HttpRequest
from ninja import File as Upload
from ninja import Query, Router, Status, UploadedFile
from ninja.pagination import paginate

from files import selectors, services
from files.models import File
from files.responses import file_content_response
from files.schemas import FileFilters, FileOut
from talorys.accounts.auth import request_actor
from talorys.web.pagination import Pagination
from talorys.web.schemas import ErrorOut

router = Router(tags=["files"])


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
    return file_content_response(selectors.file_get(file_id=file_id))


@router.delete("/{int:file_id}", response={204: None})
def file_delete(request: HttpRequest, file_id: int) -> Status:
    """To the bin for 30 days, restorable (/api/bin/file/{id}/restore)."""
    services.file_delete(file_id=file_id, actor=request_actor(request))
    return Status(204, None)
