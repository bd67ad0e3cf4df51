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
    # kind -> {"added": [...], "changed": [...]}: the titles of the first rows of each (20).
    items: dict[str, dict[str, list[str]]]
    # kind -> {"fields": {column: rows differing in it}, "newer": n, "older": n}: how its changed
    # rows differ from what is here (importer.Counts.how_changed), for kinds with any changed.
    changes: dict[str, dict[str, Any]]


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
        "items": {
            kind: {"added": count.added_titles, "changed": count.changed_titles}
            for kind, count in counts.items()
            if count.added_titles or count.changed_titles
        },
        "changes": {kind: count.how_changed() for kind, count in counts.items() if count.changed},
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


# The kinds a person does not count by their own name, singular or plural: (one, many).
NOUNS: dict[str, tuple[str, str]] = {
    "memories": ("memory", "memories"),
    "memory_revisions": ("earlier version of a memory", "earlier versions of memories"),
    "pending_actions": ("approval", "approvals"),
    "approval_events": ("approval decision", "approval decisions"),
    "changes": ("change-log entry", "change-log entries"),
    "file_passages": ("passage of a file", "passages of files"),
    "file_contents": ("file's content", "files' contents"),
}


def _nouns(kind: str) -> tuple[str, str]:
    """A kind as a person counts it: "tasks" -> ("task", "tasks")."""
    many = kind.replace("_", " ")
    return NOUNS.get(kind, (many.removesuffix("s"), many))


def kind_label(kind: str) -> str:
    """A kind's name for a heading: "memory_revisions" -> "Earlier versions of memories"."""
    many = _nouns(kind)[1]
    return many[:1].upper() + many[1:]


def _counted(kind: str, n: int) -> str:
    if kind == "settings":
        return "your settings"
    one, many = _nouns(kind)
    return f"{n} {one if n == 1 else many}"


def _listed(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def report_words(report: ImportReport | dict[str, Any]) -> str:
    """What an import did, in sentences: "Added 2 tasks and 1 note. 5 items were already the
    same." (report_lines is the shell's line per kind)."""
    kinds: dict[str, dict[str, int]] = report["kinds"]
    sentences = []
    for key, verb in (("added", "Added"), ("changed", "Changed")):
        parts = [_counted(kind, count[key]) for kind, count in kinds.items() if count[key]]
        if parts:
            sentences.append(f"{verb} {_listed(parts)}.")
    same = sum(count["unchanged"] for count in kinds.values())
    kept = sum(count["kept"] for count in kinds.values())
    if same:
        sentences.append(f"{same} {'item was' if same == 1 else 'items were'} already the same.")
    if kept:
        sentences.append(
            f"{kept} {'item differs' if kept == 1 else 'items differ'} but "
            f"{'was' if kept == 1 else 'were'} kept as here (history already here is never "
            "rewritten, and your automations keep your version)."
        )
    return " ".join(sentences) or "The backup held nothing to import."


def changed_words(how: dict[str, Any] | None) -> str:
    """How a kind's changed rows differ, for the preview (importer.Counts.how_changed): "title
    and notes differ; 2 newer in the file, 1 older", the fields most rows differ in first.
    Empty for a preview stashed before this was kept."""
    if not how:
        return ""
    fields = sorted(how.get("fields", {}).items(), key=lambda item: (-item[1], item[0]))
    named = [column.removesuffix("_id").replace("_", " ") for column, _ in fields]
    parts = [f"{_listed(named)} {'differs' if len(named) == 1 else 'differ'}"] if named else []
    ages = [f"{how['newer']} newer in the file"] if how.get("newer") else []
    if how.get("older"):
        ages.append(f"{how['older']} older" if ages else f"{how['older']} older in the file")
    if ages:
        parts.append(", ".join(ages))
    return "; ".join(parts)
