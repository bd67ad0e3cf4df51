"""The owner's files' bytes in a backup: the ``file_contents`` kind, whose rows are not a
table's but each stored blob (files/storage.py) cut into parts of CONTENT_PART_BYTES, base64,
in order (``part`` of ``parts``). The export streams them a part at a time; the import writes
each blob's parts to a temporary file, checks the whole against its sha256 (a damaged or
edited part refuses the whole import) and stores it once, leaving a blob already here as it is.

A dry run checks every part and stores nothing. A blob stored by an import whose transaction
then fails is named by no row; the next upload of the same bytes reuses it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import tempfile
from collections.abc import Iterator
from typing import IO, Any

from backup.rows import CONTENT_PART_BYTES
from files import storage
from files.models import File
from talorys.lib.errors import ValidationFailed

# Parts merged per batch: 16 parts of 128 KiB, about 3 MB of base64 held at once.
CONTENT_BATCH_ROWS = 16


def content_rows() -> Iterator[dict[str, Any]]:
    """Every stored blob a file names, once, in parts (a missing blob is left out: its file's
    content was lost here already)."""
    number = 0
    shas = File.objects.order_by("sha256").values_list("sha256", flat=True).distinct()
    for sha256 in shas.iterator(chunk_size=1000):
        try:
            size = storage.files_storage().size(storage.blob_name(sha256))
            chunks = storage.blob_chunks(sha256, CONTENT_PART_BYTES)
            parts = max(1, -(-size // CONTENT_PART_BYTES))
            for part in range(parts):
                number += 1
                data = next(chunks, b"")
                yield {
                    "id": number,
                    "sha256": sha256,
                    "part": part,
                    "parts": parts,
                    "data": base64.b64encode(data).decode("ascii"),
                }
        except FileNotFoundError:
            continue


class ContentMerger:
    """Blobs from the file's parts, one at a time (the parts of a blob are consecutive)."""

    def __init__(self, dry_run: bool) -> None:
        self.dry_run = dry_run
        self.sha256 = ""
        self.next_part = 0
        self.digest = hashlib.sha256()
        self.spool: IO[bytes] | None = None
        self.here = False  # the blob is stored already: its parts are only checked

    def _start(self, row: dict[str, Any]) -> None:
        if row["part"] != 0:
            raise ValidationFailed(
                f"The backup's content of file {row['sha256'][:12]}… starts at part "
                f"{row['part']}: parts are missing. Nothing was imported."
            )
        self.sha256, self.next_part, self.digest = row["sha256"], 0, hashlib.sha256()
        self.here = storage.blob_exists(self.sha256)
        self.spool = tempfile.SpooledTemporaryFile(max_size=CONTENT_PART_BYTES * 8)  # noqa: SIM115

    def add(self, rows: list[dict[str, Any]], counts: Any) -> None:
        for row in rows:
            if row["sha256"] != self.sha256 or self.spool is None:
                self.finish()
                self._start(row)
            if row["part"] != self.next_part:
                raise ValidationFailed(
                    f"The backup's content of file {self.sha256[:12]}… has its parts out of "
                    "order. Nothing was imported."
                )
            try:
                data = base64.b64decode(row["data"], validate=True)
            except binascii.Error as error:
                raise ValidationFailed("A file's content in the backup is not base64.") from error
            self.digest.update(data)
            assert self.spool is not None
            if not self.here:
                self.spool.write(data)
            self.next_part += 1
            if self.next_part == row["parts"]:
                self._store(counts)

    def _store(self, counts: Any) -> None:
        assert self.spool is not None
        if self.digest.hexdigest() != self.sha256:
            raise ValidationFailed(
                f"The backup's content of file {self.sha256[:12]}… does not match its sha256: "
                "the file is damaged. Nothing was imported."
            )
        if self.here:
            counts.unchanged += 1
        else:
            if not self.dry_run:
                storage.blob_put(self.sha256, self.spool)
            counts.added += 1
        self.spool.close()
        self.spool, self.sha256 = None, ""

    def finish(self) -> None:
        """The end of the kind's rows: a blob whose parts stopped short is refused."""
        if self.spool is not None:
            raise ValidationFailed(
                f"The backup's content of file {self.sha256[:12]}… stops after part "
                f"{self.next_part}. Nothing was imported."
            )
