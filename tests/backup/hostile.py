"""Hostile backups of a given size, in the shapes that made json.loads expensive (shared by
tests/backup/test_hostile_files.py and benchmarks/backup_import.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import IO

HEAD = b'{"format":"talorys-backup","version":1,"created_at":"2026-11-30T09:30:00+00:00",'
TAIL = b',"checksum":"sha256:0"}'


def _row(n: int) -> bytes:
    return (
        b'{"id":%d,"title":"t","status":"open","priority":2,"project_id":999999,'
        b'"created_at":"2026-11-30T09:30:00+00:00","updated_at":"2026-11-30T09:30:00+00:00"}' % n
    )


def _repeat(out: IO[bytes], size: int, first: bytes, piece: Callable[[int], bytes]) -> None:
    out.write(first)
    written, n = len(first), 0
    while written < size:
        chunk = (b"," if n else b"") + piece(n)
        out.write(chunk)
        written, n = written + len(chunk), n + 1


def many_rows(out: IO[bytes], size: int) -> None:
    """Valid small tasks with a checksum that matches, each referring to a project that is
    nowhere: refused only at the end, once every row was read and checked (the most work a
    refused file can ask for)."""
    from backup.format import canonical, checksum_text, new_checksum

    digest = new_checksum()

    def row(n: int) -> bytes:
        line = _row(n + 1)
        digest.update(canonical("tasks", json.loads(line)))
        return line

    _repeat(out, size, HEAD + b'"data":{"tasks":[', row)
    out.write(b']},"checksum":"%s"}' % checksum_text(digest).encode())


def many_keys(out: IO[bytes], size: int) -> None:
    """One row of a million keys."""
    _repeat(out, size, HEAD + b'"data":{"notes":[{', lambda n: b'"k%d":0' % n)
    out.write(b"}]}" + TAIL)


def deep(out: IO[bytes], size: int) -> None:
    """A change whose ``after`` is nested millions of levels deep."""
    half = size // 2
    out.write(HEAD + b'"data":{"changes":[{"id":1,"after":' + b"[" * half + b"]" * half)
    out.write(b"}]}" + TAIL)


def giant_string(out: IO[bytes], size: int) -> None:
    """A title of the whole file's size."""
    out.write(HEAD + b'"data":{"tasks":[{"id":1,"title":"' + b"x" * size + b'"}]}' + TAIL)


def many_bad_rows(out: IO[bytes], size: int) -> None:
    """Rows that each break the schema (a wrong type)."""
    _repeat(out, size, HEAD + b'"data":{"notes":[', lambda n: b'{"id":"x%d"}' % n)
    out.write(b"]}" + TAIL)


def wide_envelope(out: IO[bytes], size: int) -> None:
    """An envelope field holding a huge list instead of a string."""
    _repeat(out, size, HEAD + b'"app_version":[', lambda n: json.dumps(n).encode())
    out.write(b'],"data":{}' + TAIL)


SHAPES: dict[str, Callable[[IO[bytes], int], None]] = {
    "many_rows": many_rows,
    "many_keys": many_keys,
    "deep": deep,
    "giant_string": giant_string,
    "many_bad_rows": many_bad_rows,
    "wide_envelope": wide_envelope,
}
