"""One reader per accepted kind of text: bytes in, sections (text with its page or heading)
out, or ``Unreadable`` with the reason in the owner's words. Run in the child process only
(files/extraction/child.py), under its time and memory budget."""

from __future__ import annotations

import csv
import io
import re
import zipfile
from collections.abc import Callable
from html.parser import HTMLParser

from files.extraction.passages import Section

# A Word document is a ZIP: its parts' declared sizes are checked before any is unpacked.
DOCX_UNPACKED_MAX = 200 * 1024 * 1024
DOCX_RATIO_MAX = 100  # unpacked / packed, over the whole archive, past a few megabytes
_RATIO_FROM = 10 * 1024 * 1024


class Unreadable(Exception):
    """The file cannot be read; the message says why, for the owner."""


def decode(data: bytes) -> str:
    """Text in UTF-8 (with or without its mark), UTF-16 with its mark, else Windows-1252."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", "replace")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("cp1252", "replace")


def read_pdf(data: bytes) -> tuple[list[Section], int]:
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise Unreadable(
                "This PDF is encrypted (it needs a password to open). Save a copy without the "
                "password and upload that."
            )
        sections = [
            Section(page.extract_text() or "", page=number)
            for number, page in enumerate(reader.pages, 1)
        ]
    except Unreadable:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, IndexError) as error:
        raise Unreadable("This PDF is damaged and cannot be read.") from error
    if not any(section.text.strip() for section in sections):
        raise Unreadable(
            "This PDF has no text to read: its pages may be scanned images, which Talorys "
            "does not read."
        )
    return sections, len(sections)


def _check_zip(data: bytes) -> None:
    try:
        parts = zipfile.ZipFile(io.BytesIO(data)).infolist()
    except zipfile.BadZipFile as error:
        raise Unreadable("This Word document is damaged and cannot be read.") from error
    unpacked = sum(part.file_size for part in parts)
    packed = sum(part.compress_size for part in parts) or 1
    if unpacked > DOCX_UNPACKED_MAX or (
        unpacked > _RATIO_FROM and unpacked / packed > DOCX_RATIO_MAX
    ):
        raise Unreadable(
            f"This Word document would unpack to {unpacked // (1024 * 1024)} MiB from "
            f"{len(data) // 1024} KiB, more than Talorys unpacks (it may be a zip bomb)."
        )


def read_docx(data: bytes) -> tuple[list[Section], None]:
    _check_zip(data)
    import docx
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    try:
        document = docx.Document(io.BytesIO(data))
        sections: list[Section] = []
        heading = ""
        lines: list[str] = []
        for block in document.iter_inner_content():
            if isinstance(block, Table):
                lines += [" | ".join(c.text.strip() for c in row.cells) for row in block.rows]
                lines.append("")
                continue
            assert isinstance(block, Paragraph)
            style = (block.style.name if block.style is not None else "") or ""
            if style.startswith(("Heading", "Title")) and block.text.strip():
                sections.append(Section("\n".join(lines), heading=heading))
                heading, lines = block.text.strip(), []
            lines += [block.text, ""]
        sections.append(Section("\n".join(lines), heading=heading))
    except Unreadable:
        raise
    except Exception as error:  # python-docx raises many kinds on a broken part
        raise Unreadable("This Word document is damaged and cannot be read.") from error
    return [s for s in sections if s.text.strip()], None


_ATX = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")


def read_markdown(data: bytes) -> tuple[list[Section], None]:
    """Sections under each ATX heading ("## Costs"); a # inside a fenced block is code."""
    sections: list[Section] = []
    lines: list[str] = []
    heading, fenced = "", False
    for line in decode(data).splitlines():
        if _FENCE.match(line):
            fenced = not fenced
        found = None if fenced else _ATX.match(line)
        if found:
            sections.append(Section("\n".join(lines), heading=heading))
            heading, lines = found.group(2), [line]
            continue
        lines.append(line)
    sections.append(Section("\n".join(lines), heading=heading))
    return [s for s in sections if s.text.strip()], None


def read_plain(data: bytes) -> tuple[list[Section], None]:
    return [Section(decode(data))], None


# A CSV's rows are paragraphs of their own (a passage holds whole rows), each read with the
# header's names so a passage quoted alone still says what its columns are.
def read_csv(data: bytes) -> tuple[list[Section], None]:
    text = decode(data)
    try:
        dialect: type[csv.Dialect] | csv.Dialect = csv.Sniffer().sniff(text[:4096])
    except csv.Error:
        dialect = csv.excel
    rows = list(csv.reader(io.StringIO(text), dialect))
    if not rows:
        return [], None
    header, body = rows[0], rows[1:]
    lines = [
        "; ".join(f"{name}: {value}" for name, value in zip(header, row, strict=False) if value)
        for row in body
    ]
    return [Section("\n\n".join(lines or [", ".join(header)]), heading=", ".join(header))], None


class _Html(HTMLParser):
    _SKIPPED = {"script", "style", "template", "noscript", "head"}
    _HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
    _BLOCKS = {"p", "div", "li", "tr", "br", "section", "article", "table", "pre", "blockquote"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.sections: list[Section] = []
        self._heading = ""
        self._parts: list[str] = []
        self._in_heading: list[str] = []
        self._skip = 0
        self._in = ""

    def handle_starttag(self, tag: str, attrs: object) -> None:
        if tag in self._SKIPPED:
            self._skip += 1
        elif tag in self._HEADINGS:
            self._in = tag
            self._in_heading = []
        elif tag in self._BLOCKS:
            self._parts.append("\n\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self._SKIPPED:
            self._skip = max(0, self._skip - 1)
        elif tag == self._in:
            self.flush()
            self._heading = " ".join("".join(self._in_heading).split())
            self._parts.append(self._heading + "\n\n")
            self._in = ""

    def handle_data(self, data: str) -> None:
        if self._skip:
            return
        (self._in_heading if self._in else self._parts).append(data)

    def flush(self) -> None:
        self.sections.append(Section("".join(self._parts), heading=self._heading))
        self._parts = []


def read_html(data: bytes) -> tuple[list[Section], None]:
    """The visible text, in sections under each h1-h6 (scripts and styles left out)."""
    parser = _Html()
    parser.feed(decode(data))
    parser.close()
    parser.flush()
    return [s for s in parser.sections if s.text.strip()], None


READERS: dict[str, Callable[[bytes], tuple[list[Section], int | None]]] = {
    "application/pdf": read_pdf,
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": read_docx,
    "text/markdown": read_markdown,
    "text/plain": read_plain,
    "text/csv": read_csv,
    "text/html": read_html,
}
