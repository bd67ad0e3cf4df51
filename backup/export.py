"""Export: the backup document (backup/format.py) written a few rows at a time.

Each kind's rows are read with a server-side cursor (``iterator``) and written as they come,
so memory stays flat however large the database; the checksum is computed as the rows pass
and written last, with this installation's signature of it (backup/format.py). On PostgreSQL
every kind is read from one REPEATABLE READ snapshot, so a row made during the export cannot
refer to one the file does not hold (an import would refuse it).
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from backup.format import (
    FORMAT,
    KINDS,
    VERSION,
    KindSpec,
    app_version,
    canonical,
    checksum_text,
    new_checksum,
    signature,
)

# Rows per database round trip, and bytes gathered before a piece is handed to the client.
CHUNK_ROWS = 1000
PIECE_BYTES = 64 * 1024


def _value(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return value.astimezone(dt.UTC).isoformat()
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    return value


def _rows(kind: KindSpec) -> Iterator[dict[str, Any]]:
    if kind.export is not None:
        yield from kind.export()
        return
    columns = kind.columns
    rows = kind.model._base_manager.order_by("pk").values_list(*columns)
    for values in rows.iterator(chunk_size=CHUNK_ROWS):
        yield {name: _value(value) for name, value in zip(columns, values, strict=True)}


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def export_filename(now: dt.datetime | None = None) -> str:
    return f"talorys-backup-{(now or timezone.now()).astimezone(dt.UTC):%Y%m%d-%H%M%S}.json"


def export_chunks() -> Iterator[bytes]:
    """The whole document, as pieces of about PIECE_BYTES."""
    with transaction.atomic():
        if connection.vendor == "postgresql" and not _has_run_queries():
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        yield from _document()


def _has_run_queries() -> bool:
    # SET TRANSACTION must come first in a transaction: an export called inside one already
    # under way (a test's, a caller's) reads that transaction's view instead.
    return len(connection.atomic_blocks) > 1


def _document() -> Iterator[bytes]:
    digest = new_checksum()
    head = {
        "format": FORMAT,
        "version": VERSION,
        "created_at": timezone.now().astimezone(dt.UTC).isoformat(),
        "app_version": app_version(),
    }
    piece: list[str] = [_dumps(head)[:-1], ',"data":{']
    size = 0
    for index, kind in enumerate(KINDS):
        piece.append(("," if index else "") + f"\n{_dumps(kind.name)}:[")
        first = True
        for row in _rows(kind):
            digest.update(canonical(kind.name, row))
            line = ("" if first else ",") + "\n" + _dumps(row)
            first = False
            piece.append(line)
            size += len(line)
            if size >= PIECE_BYTES:
                yield "".join(piece).encode()
                piece, size = [], 0
        piece.append("]")
    checksum = checksum_text(digest)
    signed = signature(str(head["created_at"]), checksum)
    piece.append(f'\n}},"checksum":{_dumps(checksum)},"signature":{_dumps(signed)}}}\n')
    yield "".join(piece).encode()
