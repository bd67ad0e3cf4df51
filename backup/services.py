"""Backup's two services: the export (a stream of the document) and the import (checked, then
merged in one transaction; a dry run is the preview). backup/format.py says what a backup is."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, TypedDict

from backup.export import export_chunks
from backup.importer import backup_apply, backup_parse


class ImportReport(TypedDict):
    dry_run: bool
    created_at: str  # when the backup was made
    app_version: str  # the Talorys that made it
    kinds: dict[str, dict[str, int]]  # kind -> {added, changed, unchanged, kept}


def backup_export() -> Iterator[bytes]:
    """The whole backup document, a piece at a time (read lazily: iterate it to export)."""
    return export_chunks()


def backup_import(*, raw: bytes, dry_run: bool = False) -> ImportReport:
    """Import the backup in ``raw``, or with ``dry_run`` only say what the import would do.
    Refused with ValidationFailed (nothing written) when the document is not one to import."""
    parsed = backup_parse(raw)
    counts = backup_apply(parsed, dry_run=dry_run)
    return {
        "dry_run": dry_run,
        "created_at": parsed.created_at,
        "app_version": parsed.app_version,
        "kinds": {kind: count.as_dict() for kind, count in counts.items()},
    }


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
