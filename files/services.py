"""Writes of the owner's files: upload (``file_create``), the worker's extraction
(``file_extract``), the bin (``file_delete``, ``file_restore``) and the blob's release when
the last row naming it is purged.

An upload is checked before anything is stored: its size against ``TALORYS_MAX_FILE_BYTES``,
the install's total against ``TALORYS_MAX_FILES_TOTAL_BYTES`` (413, ``TooLarge``), and its type
from its bytes (files/sniff.py; 415 naming what is accepted). A refused upload leaves no row
and no blob. An accepted one is ``pending`` and its extraction is sent to the worker when the
row commits; an image is ``ready`` at once (it has no text to read).
"""

from __future__ import annotations

import hashlib
from functools import partial
from typing import IO, Any

from django.conf import settings
from django.db import transaction
from django.db.models.signals import post_delete
from django.dispatch import receiver
from django.utils import timezone

from files import storage
from files.extraction import runner as extraction
from files.models import File, FilePassage
from files.sniff import Refused, sniff
from talorys.history.bin import bin_move_in, bin_move_out
from talorys.history.changes import change_record
from talorys.history.kinds import ItemKind, item_fields, register_kind
from talorys.history.models import Change
from talorys.lib.actors import OWNER, Actor
from talorys.lib.errors import AppError, UnsupportedMediaType
from talorys.lib.validation import one_line


class TooLarge(AppError):
    """Over a size limit: the file's own, or the install's total for files."""

    code = "TOO_LARGE"
    status = 413


def _mib(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MiB"


def clean_name(name: str) -> str:
    """The name as shown and stored: its last path part (a browser may send a whole path), one
    line, within NAME_MAX with its ending kept; "file" when nothing is left."""
    name = one_line(name.replace("\x00", "")).replace("\\", "/").rsplit("/", 1)[-1].strip()
    if len(name) > File.NAME_MAX:
        stem, dot, ending = name.rpartition(".")
        ending = ending[:20] if dot else ""
        name = f"{stem[: File.NAME_MAX - len(ending) - 1]}.{ending}" if ending else name
        name = name[: File.NAME_MAX]
    return name or "file"


def files_total_bytes() -> int:
    """What the stored blobs take: each content counted once, binned files included (their
    bytes are kept until purged)."""
    blobs = dict(File.objects.order_by().values_list("sha256", "size").distinct())
    return sum(blobs.values())


def _check_size(size: int) -> None:
    limit = settings.TALORYS_MAX_FILE_BYTES
    if size > limit:
        raise TooLarge(
            f"The file is {_mib(size)}; files may be at most {_mib(limit)}.",
            details={"field": "file", "limit": limit},
        )


def _check_total(size: int, sha256: str) -> None:
    if File.objects.filter(sha256=sha256).exists():
        return  # the same bytes are stored already: nothing more is kept
    total, limit = files_total_bytes(), settings.TALORYS_MAX_FILES_TOTAL_BYTES
    if total + size > limit:
        raise TooLarge(
            f"Files already take {_mib(total)} of the {_mib(limit)} this install allows; "
            f"this one ({_mib(size)}) would go past it. Empty the bin or delete files first.",
            details={"field": "file", "limit": limit},
        )


def file_create(*, name: str, stream: IO[bytes], actor: Actor = OWNER) -> File:
    """Store an upload (``stream``: its bytes, read from the start) as a new file, or refuse it
    (TooLarge, UnsupportedMediaType) storing nothing."""
    name = clean_name(name)
    stream.seek(0, 2)
    size = stream.tell()
    _check_size(size)  # before the bytes are read
    stream.seek(0)
    data = stream.read()
    try:
        sniffed = sniff(name, data)
    except Refused as error:
        raise UnsupportedMediaType(str(error), details={"field": "file"}) from error
    sha256 = hashlib.sha256(data).hexdigest()
    with transaction.atomic():
        # Two uploads at the same moment may together pass the total by one file: one owner
        # uploads, and the limit is there against a full disk, not to the byte.
        _check_total(size, sha256)
        # Stored before the row commits: a row never names a missing blob (a blob whose row
        # then fails to commit is unnamed; the next upload of it reuses it).
        storage.blob_put(sha256, stream)
        file = File.objects.create(
            name=name,
            content_type=sniffed.content_type,
            size=size,
            sha256=sha256,
            status=File.Status.READY if sniffed.is_image else File.Status.PENDING,
        )
        change_record(
            kind=FILE.name,
            obj=file,
            action=Change.Action.CREATE,
            actor=actor,
            after=item_fields(FILE, file),
        )
        if not sniffed.is_image:
            transaction.on_commit(partial(_enqueue, file.pk), robust=True)
    return file


def _enqueue(file_id: int) -> None:
    from files.tasks import extract_file  # the task module imports this one

    extract_file.delay(file_id)


def file_extract(*, file_id: int) -> File | None:
    """Read a pending file's text in a child process (files/extraction/) and store it as
    passages: ``ready``, or ``failed`` with the reason. A file no longer pending (extracted
    already, purged) is left as it is: a task sent twice changes nothing."""
    file = File.objects.filter(pk=file_id, status=File.Status.PENDING).first()
    if file is None:
        return None
    try:
        result = extraction.extract(storage.blob_read(file.sha256), file.content_type)
    except FileNotFoundError:
        result = extraction.Result.failed("The file's content is missing from storage.")
    with transaction.atomic():
        file = File.objects.select_for_update().filter(pk=file_id).first()
        if file is None or file.status != File.Status.PENDING:
            return file
        FilePassage.objects.filter(file=file).delete()
        if result.reason:
            file.status, file.reason = File.Status.FAILED, result.reason[: File.REASON_MAX]
        else:
            FilePassage.objects.bulk_create(
                FilePassage(file=file, index=n, page=p.page, heading=p.heading[:200], text=p.text)
                for n, p in enumerate(result.passages)
            )
            file.status, file.reason = File.Status.READY, ""
            file.text_chars = sum(len(p.text) for p in result.passages)
        file.pages = result.pages
        file.save(update_fields=["status", "reason", "pages", "text_chars", "updated_at"])
    return file


def file_delete(*, file_id: int, actor: Actor = OWNER) -> None:
    """To the bin, restorable for BIN_RETENTION; hidden from lists, search and tools."""
    with transaction.atomic():
        bin_move_in(FILE, file_id, actor)
        _touch(file_id)


def file_restore(*, file_id: int, actor: Actor = OWNER) -> None:
    with transaction.atomic():
        bin_move_out(FILE, file_id, actor)
        _touch(file_id)


def _touch(file_id: int) -> None:
    """A move into or out of the bin changes ``updated_at``: recall's lazy pass finds the
    file's passages by it alone (files/selectors.py, ``passages_changed_since``)."""
    File.objects.filter(pk=file_id).update(updated_at=timezone.now())


@receiver(post_delete, sender=File)
def _release_blob(sender: Any, instance: File, **kwargs: Any) -> None:
    """A purged file's blob goes once the purge commits, unless another row names it."""
    transaction.on_commit(partial(blob_release, instance.sha256), robust=True)


def blob_release(sha256: str) -> bool:
    """Delete the blob if no row names it. Returns whether it did."""
    if File.objects.filter(sha256=sha256).exists():
        return False
    storage.blob_delete(sha256)
    return True


FILE = ItemKind(
    name="file",
    model=File,
    fields=("name",),
    title=lambda file: file.name,
    restore=lambda *, pk, actor, change: file_restore(file_id=pk, actor=actor),
    delete=lambda *, pk, actor: file_delete(file_id=pk, actor=actor),
)
register_kind(FILE)
