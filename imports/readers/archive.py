"""Open an uploaded export and tell its kind from its content (never from its name alone).

A zip is checked before anything in it is read, from its directory alone: at most
``ENTRIES_MAX`` entries; no name that climbs out (``..``), starts at a root (``/``, ``C:``) or
holds NUL; no archive inside it (a nested zip could hide any size); no entry that claims more
than ``RATIO_MAX`` times its compressed size (a zip bomb); and no more than ``unpacked_max``
in all. Python's zipfile then stops each entry at its declared size and checks its CRC, so a
directory that lies about a size fails at the read. Each refusal is a ValidationFailed (422) that
says what is wrong; nothing has been written then.

The kinds: a zip holding ``conversations.json`` (ChatGPT's and Claude's exports), or that JSON
alone, or Open WebUI's JSON, told apart by their first conversation's fields
(``chats.chat_kind``); a zip of Markdown files without it is a vault (``vault.py``).
"""

from __future__ import annotations

import codecs
import datetime as dt
import re
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import IO, Any

import ijson
from django.conf import settings

from imports.models import Source
from imports.readers.chats import READERS, chat_kind
from imports.readers.items import Chat, VaultFile, VaultNote
from imports.readers.vault import vault_note, vault_path_kind
from talorys.lib.errors import ValidationFailed
from talorys.workspace.models import Note

ACCEPTED = (
    "a ChatGPT export (its zip, or its conversations.json), a Claude export (its zip, or its "
    "conversations.json), an Open WebUI chats export (JSON), or a zip of Markdown notes "
    "(an Obsidian vault)"
)
ENTRIES_MAX = 20_000
# An entry may unpack to this many times its packed size: JSON and Markdown reach 10-20x; a
# zip bomb's entries claim thousands. Below RATIO_FROM bytes the ratio is not looked at.
RATIO_MAX = 100
RATIO_FROM = 1024 * 1024
NESTED = (".zip", ".jar", ".gz", ".tgz", ".tar", ".7z", ".rar", ".bz2", ".xz", ".zst")
# A note's file may be this long in bytes (UTF-8 takes up to 4 per character); longer ones
# are not imported and are counted in the report.
NOTE_BYTES_MAX = Note.CONTENT_MAX
CHATS_FILE = "conversations.json"
DRIVE = re.compile(r"^[A-Za-z]:")

Item = Chat | VaultNote


@dataclass
class Export:
    """An opened export: its kind, and its items, read afresh at each ``items()``."""

    source: Source
    items: Callable[[], Iterator[Item]]
    attachments: int = 0  # files of a vault that are not notes: imported as files
    files: Callable[[], Iterator[VaultFile]] = lambda: iter(())
    too_long: int = 0  # notes past Note.CONTENT_MAX: not imported


def unpacked_max() -> int:
    """What a zip may unpack to in all: ten times the largest upload."""
    return int(settings.MAX_CHAT_IMPORT_BYTES) * 10


def _unknown() -> ValidationFailed:
    return ValidationFailed(f"This file is not an export Talorys can import. It takes {ACCEPTED}.")


# What reading a damaged file raises: the JSON parser's, the UTF-8 decoder's, zipfile's and
# zlib's errors (a CRC that does not match, a directory that disagrees with an entry's header).
READ_ERRORS = (ijson.JSONError, UnicodeDecodeError, zipfile.BadZipFile, EOFError, zlib.error)


def _json_failed(error: Exception) -> ValidationFailed:
    if isinstance(error, zipfile.BadZipFile | EOFError | zlib.error):
        return ValidationFailed(f"The zip is damaged ({str(error)[:200]}); nothing was imported.")
    return ValidationFailed(
        f"The export is not valid JSON ({str(error)[:200]}); nothing was imported."
    )


def _json_items(open_json: Callable[[], IO[bytes]]) -> Iterator[Any]:
    """The top-level array's items, one at a time; a JSON error is ValidationFailed."""
    try:
        with open_json() as raw:
            yield from ijson.items(raw, "item", use_float=True)
    except READ_ERRORS as error:
        raise _json_failed(error) from error


def _json_kind(open_json: Callable[[], IO[bytes]]) -> Source:
    try:
        with open_json() as raw:
            prefix, event, _value = next(ijson.parse(raw), ("", "", None))
    except READ_ERRORS as error:
        raise _json_failed(error) from error
    if (prefix, event) != ("", "start_array"):
        raise _unknown()
    first = next(_json_items(open_json), None)
    if first is None:
        raise ValidationFailed("The export holds no conversations: there is nothing to import.")
    kind = chat_kind(first)
    if kind is None:
        raise _unknown()
    return kind


def _chats(source: Source, open_json: Callable[[], IO[bytes]]) -> Export:
    read = READERS[source]

    def items() -> Iterator[Item]:
        for raw in _json_items(open_json):
            chat = read(raw) if isinstance(raw, dict) else None
            if chat is not None:
                yield chat

    return Export(source=source, items=items)


def _without_bom(raw: IO[bytes]) -> IO[bytes]:
    """The JSON past a UTF-8 byte order mark, if it starts with one (an editor that saved the
    file may write one; yajl refuses it as "invalid char")."""
    if raw.read(len(codecs.BOM_UTF8)) != codecs.BOM_UTF8:
        raw.seek(0)
    return raw


class _Unclosed:
    """The upload, handed to a ``with`` that must not close it (it is read again)."""

    def __init__(self, stream: IO[bytes]) -> None:
        self.stream = stream

    def __enter__(self) -> IO[bytes]:
        self.stream.seek(0)
        return _without_bom(self.stream)

    def __exit__(self, *exc: object) -> None:
        return None


def export_open(stream: IO[bytes]) -> Export:
    """The export in ``stream`` (a seekable binary file), checked and its kind known; else
    ValidationFailed saying why."""
    stream.seek(0)
    head = stream.read(4)
    stream.seek(0)
    if head.startswith(b"PK"):
        return _zip_export(stream)
    if not head.strip():
        raise ValidationFailed("The file is empty.")
    opened = _Unclosed(stream)
    return _chats(_json_kind(lambda: opened), lambda: opened)  # type: ignore[arg-type,return-value]


def _unsafe(name: str) -> bool:
    normal = name.replace("\\", "/")
    return (
        "\x00" in name
        or normal.startswith("/")
        or bool(DRIVE.match(normal))
        or ".." in normal.split("/")
    )


def _checked(archive: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
    """The zip's file entries, once its directory passed every check above."""
    entries = archive.infolist()
    if len(entries) > ENTRIES_MAX:
        raise ValidationFailed(
            f"The zip holds {len(entries)} entries; at most {ENTRIES_MAX} are accepted."
        )
    total = 0
    for entry in entries:
        name = entry.filename
        if _unsafe(name):
            raise ValidationFailed(
                f"The zip holds a file whose name leads outside it ({name[:100]!r}): refused."
            )
        if name.lower().endswith(NESTED):
            raise ValidationFailed(
                f"The zip holds another archive ({name[:100]!r}): archives inside the export are "
                "not accepted; unpack it and import its content."
            )
        if entry.flag_bits & 0x1:
            raise ValidationFailed("The zip is password-protected: export it again without one.")
        too_packed = entry.file_size > RATIO_FROM and entry.file_size > RATIO_MAX * max(
            entry.compress_size, 1
        )
        total += entry.file_size
        if too_packed or total > unpacked_max():
            raise ValidationFailed(
                "The zip unpacks to far more than it holds (a zip bomb, or a damaged file): refused."
            )
    return [entry for entry in entries if not entry.is_dir()]


def _zip_export(stream: IO[bytes]) -> Export:
    try:
        archive = zipfile.ZipFile(stream)
    except (zipfile.BadZipFile, OSError) as error:
        raise ValidationFailed(f"The file is not a readable zip ({error}).") from error
    entries = _checked(archive)
    chats = [e for e in entries if PurePosixPath(e.filename).name == CHATS_FILE]
    if chats:
        entry = min(chats, key=lambda e: e.filename.count("/"))

        def member() -> IO[bytes]:
            return _without_bom(archive.open(entry))

        return _chats(_json_kind(member), member)
    return _vault(archive, entries)


def _root(names: list[str]) -> str:
    """The folder every file of the vault is in (the vault's own, when it was zipped whole)."""
    firsts = {PurePosixPath(name).parts[0] for name in names}
    nested = all(len(PurePosixPath(name).parts) > 1 for name in names)
    return f"{firsts.pop()}/" if len(firsts) == 1 and nested else ""


def _vault(archive: zipfile.ZipFile, entries: list[zipfile.ZipInfo]) -> Export:
    kept = [(entry, vault_path_kind(entry.filename)) for entry in entries]
    kept = [(entry, kind) for entry, kind in kept if kind]
    notes = [entry for entry, kind in kept if kind == "note"]
    if not notes:
        raise _unknown()
    root = _root([entry.filename for entry, _ in kept])
    fitting = [entry for entry in notes if entry.file_size <= NOTE_BYTES_MAX]

    def items() -> Iterator[Item]:
        for entry in sorted(fitting, key=lambda e: e.filename):
            try:
                raw = archive.read(entry)
            except (zipfile.BadZipFile, OSError, EOFError, zlib.error) as error:
                raise ValidationFailed(f"The zip is damaged ({error}).") from error
            when = dt.datetime(*entry.date_time, tzinfo=dt.UTC)
            yield vault_note(entry.filename.removeprefix(root), raw, when)

    def read(entry: zipfile.ZipInfo) -> Callable[[], bytes]:
        def bytes_of() -> bytes:
            try:
                return archive.read(entry)
            except (zipfile.BadZipFile, OSError, EOFError, zlib.error) as error:
                raise ValidationFailed(f"The zip is damaged ({error}).") from error

        return bytes_of

    others = sorted((e for e, kind in kept if kind == "attachment"), key=lambda e: e.filename)

    def files() -> Iterator[VaultFile]:
        for entry in others:
            yield VaultFile(entry.filename.removeprefix(root), entry.file_size, read(entry))

    return Export(
        source=Source.VAULT,
        items=items,
        files=files,
        attachments=len(kept) - len(notes),
        too_long=len(notes) - len(fitting),
    )
