"""Import: read and check the whole document, then merge it by stable ids in one transaction.

``backup_parse`` refuses a document before anything is written: not JSON, not a Talorys
backup, another version, a checksum that does not match, a row that breaks the schema
(backup/format.py: types, the models' limits, NUL and control characters), an id twice in a
kind, or a reference to a row that is neither in the file nor here. Each refusal is a
ValidationFailed naming the problem.

``backup_apply`` merges kind by kind (referenced kinds first), keeping each row's id: a new id
is added, a known id whose content differs is changed, equal content is left alone, except
where a fence says otherwise (``_fence_new`` and ``KindSpec.policy``):

- imported automations arrive paused (origin ``import``, not armed); an automation already
  here keeps the owner's version, and the only change an import makes to it is pausing it
  (when the file has it paused), through ``automation_pause``;
- history is never rewritten (messages, pending actions, the audit trail, the change log,
  memory revisions, automation runs): a known id keeps what happened here;
- an imported pending action carries no approval metadata (no snapshot, payload, result or undo
  window, and "pending" becomes "expired"), and an imported message no ``action_id``: nothing
  imported can be approved or undone;
- imported messages and conversations are marked ``import`` (agent/rerun.py refuses to re-run
  them) and no conversation summary is installed;
- where the model is reached (model and embeddings URLs and names) stays as set here.

Explicit ids are inserted as loaddata does (``raw``: the file's own created_at and updated_at
are kept); on PostgreSQL the tables' sequences are then moved past the largest id. A dry run
does all of it and rolls back, so the preview counts are exactly what the import would do.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from django.core.management.color import no_style
from django.db import IntegrityError, connection, models, transaction
from django.db.models import F
from pydantic import ValidationError

from agent.models import Message, Origin
from approvals.models import PendingAction
from automations.models import Automation
from automations.schedules import schedule_parse
from automations.services.crud import automation_pause
from backup.format import (
    BY_NAME,
    FORMAT,
    KIND_NAMES,
    KINDS,
    VERSION,
    Envelope,
    KindSpec,
    canonical,
    checksum_text,
    new_checksum,
)
from talorys.lib.actors import Actor
from talorys.lib.errors import AppError, ValidationFailed

IMPORT = Actor(source="import")
# The problems one refusal lists; past this many, the first ones are enough to act on.
PROBLEMS_MAX = 20
# Ids per query when looking up what is here already (SQLite's limit on parameters).
LOOKUP_CHUNK = 500


@dataclass
class Counts:
    added: int = 0
    changed: int = 0
    unchanged: int = 0
    # Differs from the file, but a fence keeps what is here (history, the owner's automations).
    kept: int = 0

    def as_dict(self) -> dict[str, int]:
        return {
            "added": self.added,
            "changed": self.changed,
            "unchanged": self.unchanged,
            "kept": self.kept,
        }


@dataclass
class Parsed:
    created_at: str
    app_version: str
    rows: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


class _Problems:
    def __init__(self) -> None:
        self.items: list[str] = []

    def add(self, text: str) -> None:
        self.items.append(text)

    def raise_any(self, lead: str) -> None:
        if self.items:
            shown = self.items[:PROBLEMS_MAX]
            more = len(self.items) - len(shown)
            tail = f" (and {more} more)" if more else ""
            raise ValidationFailed(
                f"{lead}: {'; '.join(shown)}{tail}.", details={"problems": shown}
            )


def _where(kind: str, index: int, row: Any) -> str:
    ident = row.get("id") if isinstance(row, dict) else None
    return f"{kind}[{index}]" + (f" (id {ident})" if isinstance(ident, int) else "")


def _document(raw: bytes) -> dict[str, Any]:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValidationFailed(f"The file is not UTF-8 text (byte {exc.start}).") from exc
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValidationFailed(
            f"The file is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}."
        ) from exc
    except RecursionError as exc:
        raise ValidationFailed("The file is not valid JSON: it is nested too deeply.") from exc
    if not isinstance(document, dict):
        raise ValidationFailed("This is not a Talorys backup: the file is not a JSON object.")
    if document.get("format") != FORMAT:
        raise ValidationFailed(f'This is not a Talorys backup: "format" must be "{FORMAT}".')
    if document.get("version") != VERSION:
        raise ValidationFailed(
            f"This backup is version {document.get('version')!r}; this Talorys reads version "
            f"{VERSION}."
        )
    return document


def _envelope(document: dict[str, Any]) -> Envelope:
    try:
        envelope = Envelope.model_validate(document)
    except ValidationError as exc:
        problems = _Problems()
        for error in exc.errors():
            loc = ".".join(str(part) for part in error["loc"])
            problems.add(f"{loc}: {error['msg']}")
        problems.raise_any("The backup's envelope is wrong")
        raise AssertionError("unreachable") from exc
    unknown = sorted(set(envelope.data) - set(KIND_NAMES))
    if unknown:
        raise ValidationFailed(
            f"The backup holds kinds this Talorys does not know: {', '.join(unknown)}; "
            f"kinds are {', '.join(KIND_NAMES)}."
        )
    return envelope


def _check_checksum(envelope: Envelope) -> None:
    digest = new_checksum()
    for kind, rows in envelope.data.items():
        for row in rows:
            digest.update(canonical(kind, row))
    if checksum_text(digest) != envelope.checksum:
        raise ValidationFailed(
            "The backup's checksum does not match its data: the file was changed or damaged."
        )


def _row_rules(kind: KindSpec, row: dict[str, Any]) -> Iterator[str]:
    """What a row's schema cannot say alone: the models' constraints across fields."""
    if kind.name == "tasks" and (row["status"] == "done") != (row["completed_at"] is not None):
        yield "completed_at must be set exactly when status is done"
    dated = kind.name in ("memories", "memory_revisions") and row["valid_from"] and row["valid_to"]
    if dated and row["valid_from"] > row["valid_to"]:
        yield "valid_from must not be after valid_to"
    if kind.name == "memories" and row["superseded_by_id"] == row["id"]:
        yield "a memory cannot supersede itself"
    if kind.name == "automations":
        try:
            schedule_parse(row["schedule"])
        except AppError as err:
            yield err.message
    if kind.name == "automation_runs" and row["status"] != "running" and not row["finished_at"]:
        yield "a finished run needs finished_at"
    if kind.name == "settings" and row["id"] != 1:
        yield "the owner's settings are one row, id 1"


def _rows(envelope: Envelope) -> dict[str, list[dict[str, Any]]]:
    problems = _Problems()
    checked: dict[str, list[dict[str, Any]]] = {}
    for kind in KINDS:
        rows: list[dict[str, Any]] = []
        seen: set[int] = set()
        for index, raw in enumerate(envelope.data.get(kind.name, [])):
            where = _where(kind.name, index, raw)
            try:
                row = kind.schema.model_validate(raw).model_dump()
            except ValidationError as exc:
                for error in exc.errors()[:3]:
                    loc = ".".join(str(part) for part in error["loc"])
                    problems.add(f"{where}{'.' if loc else ''}{loc}: {error['msg']}")
                continue
            for rule in _row_rules(kind, row):
                problems.add(f"{where}: {rule}")
            if row["id"] in seen:
                problems.add(f"{where}: the id {row['id']} is in {kind.name} twice")
            seen.add(row["id"])
            rows.append({name: row[name] for name in kind.columns})
        checked[kind.name] = rows
        if len(problems.items) > PROBLEMS_MAX:
            break
    problems.raise_any("The backup has rows that cannot be imported")
    return checked


def _chunks(values: list[int]) -> Iterator[list[int]]:
    for start in range(0, len(values), LOOKUP_CHUNK):
        yield values[start : start + LOOKUP_CHUNK]


def _ids_here(model: type[models.Model], ids: Iterable[int]) -> set[int]:
    found: set[int] = set()
    for chunk in _chunks(sorted(ids)):
        found.update(model._base_manager.filter(pk__in=chunk).values_list("pk", flat=True))
    return found


def _check_references(rows: dict[str, list[dict[str, Any]]]) -> None:
    problems = _Problems()
    for kind in KINDS:
        for column, target in kind.refs.items():
            in_file = {row["id"] for row in rows[target]}
            wanted = {row[column] for row in rows[kind.name] if row[column] is not None}
            missing = wanted - in_file
            missing -= _ids_here(BY_NAME[target].model, missing)
            for ident in sorted(missing)[:PROBLEMS_MAX]:
                problems.add(
                    f"{kind.name}.{column} {ident}: no such row in {target}, here or in the file"
                )
    problems.raise_any("The backup refers to rows that do not exist")


def backup_parse(raw: bytes) -> Parsed:
    """The checked document, or ValidationFailed naming what is wrong. Reads, never writes."""
    envelope = _envelope(_document(raw))
    _check_checksum(envelope)
    rows = _rows(envelope)
    _check_references(rows)
    return Parsed(
        created_at=envelope.created_at.isoformat(), app_version=envelope.app_version, rows=rows
    )


def _default(model: type[models.Model], column: str) -> Any:
    column_field = model._meta.get_field(column)
    assert isinstance(column_field, models.Field)
    return column_field.get_default()


def _fence_new(kind: KindSpec, row: dict[str, Any]) -> dict[str, Any]:
    """A new row as it may arrive here."""
    row = dict(row)
    for column in kind.kept:
        row[column] = _default(kind.model, column)
    if kind.model is Automation:
        row.update(enabled=False, next_run_at=None, armed_time_zone="")
        row["origin"] = Automation.Origin.IMPORT
    elif kind.name in ("conversations", "messages"):
        row["origin"] = Origin.IMPORT
    if kind.model is Message:
        if row["status"] == Message.Status.STREAMING:
            row["status"] = Message.Status.CANCELLED  # no turn here is writing it
        row["tool_activity"] = [
            {key: value for key, value in item.items() if key != "action_id"}
            if isinstance(item, dict)
            else item
            for item in row["tool_activity"] or []
        ]
    if kind.model is PendingAction and row["status"] == PendingAction.Status.PENDING:
        row["status"] = PendingAction.Status.EXPIRED
    return row


def _here(kind: KindSpec, ids: list[int]) -> dict[int, dict[str, Any]]:
    columns = kind.columns
    here: dict[int, dict[str, Any]] = {}
    for chunk in _chunks(ids):
        for values in kind.model._base_manager.filter(pk__in=chunk).values_list(*columns):
            here[values[0]] = dict(zip(columns, values, strict=True))
    return here


def _insert(model: type[models.Model], rows: list[dict[str, Any]]) -> None:
    """Insert with the rows' own ids and dates (raw: no auto_now), in batches."""
    fields = list(model._meta.concrete_fields)
    objs = [model(**row) for row in rows]
    batch = max(1, connection.ops.bulk_batch_size(fields, objs) or len(objs))
    for start in range(0, len(objs), batch):
        model._base_manager._insert(objs[start : start + batch], fields=fields, raw=True)  # type: ignore[attr-defined]


def _pausable(automation: dict[str, Any]) -> bool:
    """Running here, and reachable by automation_pause (not in the bin)."""
    return bool(automation["enabled"]) and automation["deleted_at"] is None


def _apply_kind(kind: KindSpec, rows: list[dict[str, Any]]) -> tuple[Counts, list[int]]:
    """Insert the new rows and write the changed ones; the ids of automations to pause."""
    counts = Counts()
    compared = [column for column in kind.columns if column not in kind.kept]
    here = _here(kind, [row["id"] for row in rows])
    new: list[dict[str, Any]] = []
    changed: list[dict[str, Any]] = []
    pause: list[int] = []
    for row in rows:
        mine = here.get(row["id"])
        if mine is None:
            new.append(_fence_new(kind, row))
        elif all(mine[column] == row[column] for column in compared):
            counts.unchanged += 1
        elif kind.policy == "merge":
            changed.append(row)
        elif kind.policy == "automation" and _pausable(mine) and not row["enabled"]:
            pause.append(row["id"])
        else:
            counts.kept += 1
    _insert(kind.model, new)
    if changed:
        objs = [kind.model(**{column: row[column] for column in compared}) for row in changed]
        kind.model._base_manager.bulk_update(
            objs, [column for column in compared if column != "id"], batch_size=200
        )
        if any(field.name == "version" for field in kind.model._meta.fields):
            # A changed item is a new version: an edit from before the restore is refused (409).
            kind.model._base_manager.filter(pk__in=[row["id"] for row in changed]).update(
                version=F("version") + 1
            )
    counts.added, counts.changed = len(new), len(changed) + len(pause)
    return counts, pause


def _reset_sequences() -> None:
    """PostgreSQL: the next id of each table past the largest one inserted (SQLite needs none)."""
    statements = connection.ops.sequence_reset_sql(no_style(), [kind.model for kind in KINDS])
    if statements:
        with connection.cursor() as cursor:
            for statement in statements:
                cursor.execute(statement)


def _after_commit() -> None:
    """Re-arm the schedules (the dispatcher re-arms every enabled automation for the owner's time
    zone, which the import may have changed) and bring the recall index up to the new rows."""
    from automations.tasks import dispatch_due
    from memory.tasks import reindex_recall

    dispatch_due.delay()
    reindex_recall.delay()


def backup_apply(parsed: Parsed, *, dry_run: bool) -> dict[str, Counts]:
    """Merge a parsed backup in one transaction; a dry run rolls it back. Per kind, the counts."""
    counts: dict[str, Counts] = {}
    try:
        with transaction.atomic():
            pause: list[int] = []
            for kind in KINDS:
                counts[kind.name], to_pause = _apply_kind(kind, parsed.rows[kind.name])
                pause += to_pause
            _reset_sequences()
            # After the sequences moved: a pause records a change, whose new id must not be one
            # the file's change log brings.
            for automation_id in pause:
                automation_pause(automation_id=automation_id, actor=IMPORT)
            if dry_run:
                transaction.set_rollback(True)
            else:
                transaction.on_commit(_after_commit, robust=True)
    except IntegrityError as exc:
        # A row the schema let through but the database refuses (two runs of one automation for
        # one slot, say): the whole import is rolled back.
        raise ValidationFailed(
            f"The backup conflicts with the data here, so nothing was imported: {exc}".strip()
        ) from exc
    return counts
