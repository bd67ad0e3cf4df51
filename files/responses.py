"""A file's bytes as an HTTP response, for the API (/api/files/{id}/content) and the page route
(/files/{id}/content) alike: the sniffed type, inline only for a PDF (its viewer opens at
#page=N) or an accepted image, a download for anything else (HTML above all: an uploaded page
never runs as ours), and never sniffed by the browser."""

from django.http import FileResponse

from files import storage
from files.models import File
from talorys.lib.errors import NotFound

INLINE_TYPES = {"application/pdf", "image/png", "image/jpeg", "image/gif", "image/webp"}


def file_content_response(file: File) -> FileResponse:
    """NotFound when the bytes are missing from storage here (a restore without them)."""
    try:
        content = storage.files_storage().open(storage.blob_name(file.sha256), "rb")
    except FileNotFoundError as error:
        raise NotFound(f"The content of file {file.pk} is missing from storage.") from error
    response = FileResponse(
        content,
        content_type=file.content_type,
        as_attachment=file.content_type not in INLINE_TYPES,
        filename=file.name,
    )
    response["X-Content-Type-Options"] = "nosniff"
    response["Cache-Control"] = "private, max-age=3600"
    return response
