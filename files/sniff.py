"""What a file is, from its bytes: a few magic numbers and a text check, never the name alone.

A dependency (``filetype``, ``puremagic``) was weighed and not taken: the accepted kinds are
few, their signatures are a handful of bytes each, and neither library reads text, which is most
of what is uploaded here. Measured on one sample of each kind (PDF and Word as
tests/files/makers.py makes them, PNG, JPEG, GIF, WebP, a plain ZIP; Markdown, plain, CSV,
HTML, Windows-1252 and UTF-16 text): filetype 1.2.0 named the 7 binary kinds and none of the 6
texts; puremagic 1.30 named 2 texts and called the plain ZIP a Word document; this module names
all 13 (the ZIP refused).
The name decides only between kinds of text, and is checked against the bytes: a name ending in
``.pdf`` whose content is not a PDF is refused (``Mismatch``) rather than stored as something
the owner did not mean to upload.
"""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass

PDF = "application/pdf"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
MARKDOWN = "text/markdown"
PLAIN = "text/plain"
CSV = "text/csv"
HTML = "text/html"
IMAGES = {
    b"\x89PNG\r\n\x1a\n": "image/png",
    b"\xff\xd8\xff": "image/jpeg",
    b"GIF87a": "image/gif",
    b"GIF89a": "image/gif",
}
TEXT_TYPES = (MARKDOWN, PLAIN, CSV, HTML)
ACCEPTED = (
    "PDF, Word (.docx), Markdown, plain text, CSV and HTML files, "
    "and PNG, JPEG, GIF and WebP images"
)
# What a name's ending promises; the bytes must keep it.
_PROMISED = {
    "pdf": PDF,
    "docx": DOCX,
    "png": "image/png",
    "jpg": "image/jpeg",
    "jpeg": "image/jpeg",
    "gif": "image/gif",
    "webp": "image/webp",
}
_NAMES = {
    PDF: "a PDF file",
    DOCX: "a Word document",
    "image/png": "a PNG image",
    "image/jpeg": "a JPEG image",
    "image/gif": "a GIF image",
    "image/webp": "a WebP image",
    MARKDOWN: "Markdown text",
    PLAIN: "plain text",
    CSV: "CSV text",
    HTML: "HTML",
}
_TEXT_BY_ENDING = {
    "md": MARKDOWN,
    "markdown": MARKDOWN,
    "csv": CSV,
    "html": HTML,
    "htm": HTML,
}
_TEXT_CHECKED = 64 * 1024  # how much of a file the text check reads


class Refused(ValueError):
    """Not a kind Talorys accepts, or not what its name says; the message says which."""


@dataclass(frozen=True)
class Sniffed:
    content_type: str

    @property
    def is_image(self) -> bool:
        return self.content_type.startswith("image/")


def _ending(name: str) -> str:
    return name.rsplit(".", 1)[-1].lower() if "." in name else ""


def _binary_type(head: bytes, data: bytes) -> str | None:
    if b"%PDF-" in head[:1024]:
        return PDF
    for magic, content_type in IMAGES.items():
        if head.startswith(magic):
            return content_type
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    if head.startswith(b"PK\x03\x04"):
        try:
            names = zipfile.ZipFile(io.BytesIO(data)).namelist()
        except (zipfile.BadZipFile, ValueError) as error:
            raise Refused("This ZIP archive is damaged.") from error
        if "word/document.xml" in names:
            return DOCX
        raise Refused(f"ZIP archives are not accepted. Talorys accepts {ACCEPTED}.")
    return None


def _is_text(data: bytes) -> bool:
    sample = data[:_TEXT_CHECKED]
    if sample.startswith((b"\xff\xfe", b"\xfe\xff")):
        return True  # UTF-16 with its byte order mark
    if b"\x00" in sample:
        return False
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as error:
        # A sample cut inside a character is still text; anything else is not UTF-8.
        if error.start < len(sample) - 4:
            return _is_latin(sample)
    return True


def _is_latin(sample: bytes) -> bool:
    """Legacy 8-bit text (Windows-1252 and the like): no control bytes besides the usual."""
    return not any(b < 9 or 13 < b < 32 for b in sample)


def _text_type(name: str, data: bytes) -> str:
    by_name = _TEXT_BY_ENDING.get(_ending(name))
    if by_name:
        return by_name
    start = data[:512].lstrip().lower()
    if start.startswith((b"<!doctype html", b"<html")):
        return HTML
    return PLAIN


def sniff(name: str, data: bytes) -> Sniffed:
    """The type of ``data`` (uploaded as ``name``), or Refused saying why not."""
    if not data:
        raise Refused("The file is empty.")
    found = _binary_type(data[:4096], data)
    if found is None and _is_text(data):
        found = _text_type(name, data)
    promised = _PROMISED.get(_ending(name))
    if promised and found != promised:
        raise Refused(
            f"This is not {_NAMES[promised]}: its name ends in .{_ending(name)} but its content "
            + ("is of no kind Talorys accepts." if found is None else f"is {_NAMES[found]}.")
        )
    if found is None:
        raise Refused(f"This kind of file is not accepted. Talorys accepts {ACCEPTED}.")
    return Sniffed(found)
