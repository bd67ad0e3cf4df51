"""Backup's two services: the export (a stream of the document) and the import (checked, then
merged in one transaction; a dry run is the preview). backup/format.py says what a backup is."""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import IO, Any, TypedDict

from backup.checks import backup_check
from backup.export import export_chunks
from backup.importer import backup_apply


class ImportReport(TypedDict):
    dry_run: bool
    created_at: str  # when the backup was made
    app_version: str  # the Talorys that made it
    # Signed by this installation (exported here, unchanged since); else made elsewhere: another
    # installation, or an edited or forged file (a checksum anyone can recompute).
    made_here: bool
    kinds: dict[str, dict[str, int]]  # kind -> {added, changed, unchanged, kept}


def backup_export() -> Iterator[bytes]:
    """The whole backup document, a piece at a time (read lazily: iterate it to export)."""
    return export_chunks()


def backup_import(*, source: bytes | IO[bytes], dry_run: bool = False) -> ImportReport:
    """Import the backup in ``source`` (its bytes, or a binary file it can read twice from the
    start), or with ``dry_run`` only say what the import would do. Refused with ValidationFailed
    (nothing written) when the document is not one to import."""
    stream = io.BytesIO(source) if isinstance(source, bytes) else source
    stream.seek(0)
    checked = backup_check(stream)
    counts = backup_apply(stream, checked, dry_run=dry_run)
    return {
        "dry_run": dry_run,
        "created_at": checked.created_at,
        "app_version": checked.app_version,
        "made_here": checked.made_here,
        "kinds": {kind: count.as_dict() for kind, count in counts.items()},
    }


def origin_text(made_here: bool) -> str:
    """What the preview says about where the file comes from."""
    if made_here:
        return (
            "Made by this installation: it carries this installation's signature, so it was "
            "exported here and has not been changed since."
        )
    return (
        "Made elsewhere: it does not carry this installation's signature, so it comes from "
        "another installation, or was edited or forged (its checksum only finds damage: anyone "
        "can recompute it). Import it only if you trust where it came from."
    )


def report_lines(report: ImportReport | dict[str, Any]) -> list[str]:
    """The report as lines for a person: one per kind that the backup holds anything of."""
    lines = []
    for kind, count in report["kinds"].items():
        if any(count.values()):
            lines.append(
                f"{kind}: {count['added']} added, {count['changed']} changed, "
                f"{count['unchanged']} unchanged, {count['kept']} kept as they are here"
            )
    return lines or ["The backup holds no rows."]
