"""Check a backup before anything is written: one streamed reading (backup/reader.py).

``backup_check`` refuses a document, with a ValidationFailed naming the problem: not UTF-8 or
not JSON, not a Talorys backup, another version, a row that breaks its schema
(backup/rows.py: types, the models' limits, an id past ``ID_MAX``, NUL; control characters in
a one-line field are made one line, not refused)
or the models' rules across fields, an id twice in a kind, a reference to a row that is neither
in the file nor here, a wrong envelope, a checksum that does not match. Rows are checked as
they are read and dropped, so memory holds the ids, not the rows; past PROBLEMS_MAX problems the
reading stops and the file is refused.

What it keeps (``Checked``) is what the import needs before it writes: the envelope, whether
this installation signed the file, and each kind's ids.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any

from django.db import models
from pydantic import ValidationError

from backup.format import (
    BY_NAME,
    KINDS,
    Envelope,
    KindSpec,
    canonical,
    checksum_text,
    new_checksum,
    signed_here,
)
from backup.reader import BackupReader
from talorys.lib.errors import AppError, ValidationFailed
from talorys.lib.schedules import repeat_parse, schedule_parse

# The problems one refusal lists; past this many, the first ones are enough to act on.
PROBLEMS_MAX = 20
# Ids per query when looking up what is here already (SQLite's limit on parameters).
LOOKUP_CHUNK = 500


@dataclass
class Checked:
    created_at: str
    app_version: str
    # Signed with this installation's secret: exported here and not changed since.
    made_here: bool
    ids: dict[str, set[int]] = field(default_factory=dict)


class Problems(list[str]):
    def raise_any(self, lead: str) -> None:
        if self:
            shown = self[:PROBLEMS_MAX]
            more = len(self) - len(shown)
            tail = f" (and {more} more)" if more else ""
            raise ValidationFailed(
                f"{lead}: {'; '.join(shown)}{tail}.", details={"problems": shown}
            )


def _where(kind: str, index: int, row: Any) -> str:
    ident = row.get("id") if isinstance(row, dict) else None
    return f"{kind}[{index}]" + (f" (id {ident})" if isinstance(ident, int) else "")


def _row_rules(kind: KindSpec, row: dict[str, Any]) -> Iterator[str]:
    """What a row's schema cannot say alone: the models' constraints across fields."""
    if kind.name == "tasks" and (row["status"] == "done") != (row["completed_at"] is not None):
        yield "completed_at must be set exactly when status is done"
    dated = kind.name in ("memories", "memory_revisions") and row["valid_from"] and row["valid_to"]
    if dated and row["valid_from"] > row["valid_to"]:
        yield "valid_from must not be after valid_to"
    if kind.name == "memories" and row["superseded_by_id"] == row["id"]:
        yield "a memory cannot supersede itself"
    if kind.name == "messages" and row["parent_id"] is not None and row["parent_id"] >= row["id"]:
        yield "a message follows an older one: parent_id must be smaller than id"
    yield from _schedule_rules(kind, row)
    if kind.name == "automation_runs" and row["status"] != "running" and not row["finished_at"]:
        yield "a finished run needs finished_at"
    if kind.name == "settings" and row["id"] != 1:
        yield "the owner's settings are one row, id 1"


def _schedule_rules(kind: KindSpec, row: dict[str, Any]) -> Iterator[str]:
    """An automation's schedule, and a task's repeat, as the services would take them."""
    try:
        if kind.name == "automations":
            schedule_parse(row["schedule"])
        if kind.name == "tasks" and row["repeat"] is not None:
            repeat_parse(row["repeat"])
    except AppError as err:
        yield err.message


def row_checked(kind: KindSpec, where: str, raw: Any, problems: Problems) -> dict | None:
    """The row as the import installs it (its kind's columns), or None with its problems."""
    try:
        row = kind.schema.model_validate(raw).model_dump()
    except ValidationError as exc:
        for error in exc.errors()[:3]:
            loc = ".".join(str(part) for part in error["loc"])
            problems.append(f"{where}{'.' if loc else ''}{loc}: {error['msg']}")
        return None
    for rule in _row_rules(kind, row):
        problems.append(f"{where}: {rule}")
    return {name: row[name] for name in kind.columns}


def chunks(values: list[int]) -> Iterator[list[int]]:
    for start in range(0, len(values), LOOKUP_CHUNK):
        yield values[start : start + LOOKUP_CHUNK]


def _ids_here(model: type[models.Model], ids: Iterable[int]) -> set[int]:
    found: set[int] = set()
    for chunk in chunks(sorted(ids)):
        found.update(model._base_manager.filter(pk__in=chunk).values_list("pk", flat=True))
    return found


class _Refs:
    """Each reference's wanted ids, kept as the rows pass."""

    def __init__(self) -> None:
        self.wanted: dict[tuple[str, str], set[int]] = {}

    def note(self, kind: KindSpec, row: dict[str, Any]) -> None:
        for column in kind.refs:
            if row[column] is not None:
                self.wanted.setdefault((kind.name, column), set()).add(row[column])

    def check(self, ids: dict[str, set[int]]) -> None:
        problems = Problems()
        for (kind, column), wanted in self.wanted.items():
            target = BY_NAME[kind].refs[column]
            missing = wanted - ids.get(target, set())
            missing -= _ids_here(BY_NAME[target].model, missing)
            for ident in sorted(missing)[:PROBLEMS_MAX]:
                problems.append(
                    f"{kind}.{column} {ident}: no such row in {target}, here or in the file"
                )
        problems.raise_any("The backup refers to rows that do not exist")


def _envelope(fields: dict[str, Any]) -> Envelope:
    try:
        return Envelope.model_validate(fields)
    except ValidationError as exc:
        problems = Problems()
        for error in exc.errors():
            loc = ".".join(str(part) for part in error["loc"])
            problems.append(f"{loc}: {error['msg']}")
        problems.raise_any("The backup's envelope is wrong")
        raise AssertionError("unreachable") from exc


def backup_check(source: IO[bytes]) -> Checked:
    """The checked document's envelope and ids, or ValidationFailed. Reads, never writes."""
    reader = BackupReader(source)
    problems, refs, digest = Problems(), _Refs(), new_checksum()
    ids: dict[str, set[int]] = {kind.name: set() for kind in KINDS}
    for name, index, raw in reader.rows():
        kind, where = BY_NAME[name], _where(name, index, raw)
        digest.update(canonical(name, raw))
        row = row_checked(kind, where, raw, problems)
        if row is not None:
            if row["id"] in ids[name]:
                problems.append(f"{where}: the id {row['id']} is in {name} twice")
            ids[name].add(row["id"])
            refs.note(kind, row)
        if len(problems) > PROBLEMS_MAX:
            break  # enough to act on: the rest of the file is not read
    problems.raise_any("The backup has rows that cannot be imported")
    if not reader.has_data:
        raise ValidationFailed("The backup's envelope is wrong: data: Field required.")
    envelope = _envelope(reader.envelope)
    if checksum_text(digest) != envelope.checksum:
        raise ValidationFailed(
            "The backup's checksum does not match its data: the file was changed or damaged."
        )
    refs.check(ids)
    created_at = str(reader.envelope["created_at"])
    return Checked(
        created_at=envelope.created_at.isoformat(),
        app_version=envelope.app_version,
        made_here=signed_here(created_at, envelope.checksum, envelope.signature),
        ids=ids,
    )
