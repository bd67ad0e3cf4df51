"""Import: merge a checked backup (backup/checks.py) by stable ids, in one transaction.

``backup_apply`` reads the file a second time, a batch of rows at a time (memory holds a batch,
not the file), and merges each kind's rows in the file's order (foreign keys are checked at
commit), keeping each row's id: a new id is added, a known id whose content differs is changed,
equal content is left alone, except where a fence says otherwise (``_fence_new`` and
``KindSpec.policy``):

- imported automations arrive paused (origin ``import``, not armed); an automation already
  here keeps the owner's version, and the only change an import makes to it is pausing it
  (when the file has it paused), through ``automation_pause``;
- history is never rewritten (messages, pending actions, the audit trail, the change log,
  memory revisions, automation runs): a known id keeps what happened here;
- an imported pending action carries no approval metadata (no snapshot, payload, result or undo
  window, and "pending" becomes "expired"), and an imported message no ``action_id``: nothing
  imported can be approved or undone;
- imported messages and conversations are marked ``import`` (agent/rerun.py refuses to re-run
  them) and no conversation summary is installed; messages keep their links to the ones they
  follow (their branches), and a file written before messages had links is linked as the
  upgrade linked the messages here (backup/lineage.py);
- where the model is reached (model and embeddings URLs and names) stays as set here.

Every change to an item already here (a project, task, note, memory or conversation: a kind with
``KindSpec.item``) is in the change log with source ``import`` (``_ImportLog``): its content
before and after, a bin or a restore, each revertable like any other change on /changes/.

Explicit ids are inserted as loaddata does (raw: the file's own created_at and updated_at are
kept; ``_insert``); on PostgreSQL the tables' sequences are then moved past the largest id (rows.py
bounds imported ids, so creation goes on after). A dry run does all of it and rolls back, so the
preview counts are exactly what the import would do.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Any

from django.core.management.color import no_style
from django.db import IntegrityError, connection, models, transaction
from django.db.models import F, Max

from agent.models import Message, Origin
from approvals.models import PendingAction
from automations.models import Automation
from automations.services.crud import automation_pause
from backup.checks import Checked, Problems, chunks, row_checked
from backup.format import BY_NAME, KINDS, KindSpec
from backup.lineage import messages_link
from backup.reader import BackupReader
from talorys.history.changes import change_record
from talorys.history.kinds import ItemKind, item_fields, item_kind
from talorys.history.models import Change
from talorys.lib.actors import Actor
from talorys.lib.errors import ValidationFailed
from talorys.lib.validation import clip

IMPORT = Actor(source="import")
# Rows merged per batch: the memory an import holds, whatever the file's size.
BATCH_ROWS = 500


# Rows named per kind and outcome in a report (the preview lists them): the first ones only.
SAMPLE_ROWS = 20
SAMPLE_CHARS = 80
# The column that names a row, by kind (the first one the row has); else its id.
TITLE_COLUMNS = ("title", "name", "text", "content", "summary")
# Columns that change with any edit: not named among the fields a changed row differs in.
BOOKKEEPING = frozenset({"id", "created_at", "updated_at", "version"})


def row_title(kind: str, row: dict[str, Any]) -> str:
    """What a person would call the row: its title or name (or the start of its text)."""
    if kind == "settings":
        return "Your settings"
    for column in TITLE_COLUMNS:
        value = row.get(column)
        if isinstance(value, str) and value.strip():
            return clip(" ".join(value.split()), SAMPLE_CHARS)
    return f"#{row.get('id')}"


@dataclass
class Counts:
    added: int = 0
    changed: int = 0
    unchanged: int = 0
    # Differs from the file, but a fence keeps what is here (history, the owner's automations).
    kept: int = 0
    # The first SAMPLE_ROWS rows added and changed, by their titles (row_title).
    added_titles: list[str] = field(default_factory=list)
    changed_titles: list[str] = field(default_factory=list)
    # How the changed rows differ: per column, how many differ in it (bookkeeping aside); and
    # how many were edited later in the file than here ("newer") or earlier ("older": importing
    # puts back an earlier version of an edit made here, which the change log keeps).
    changed_fields: dict[str, int] = field(default_factory=dict)
    newer: int = 0
    older: int = 0

    def name(self, titles: list[str], kind: str, row: dict[str, Any]) -> None:
        if len(titles) < SAMPLE_ROWS:
            titles.append(row_title(kind, row))

    def note_change(
        self, kind: str, mine: dict[str, Any], row: dict[str, Any], compared: list[str]
    ) -> None:
        """A row the import changes: its title, the columns it differs in, newer or older."""
        self.name(self.changed_titles, kind, row)
        for column in compared:
            if column not in BOOKKEEPING and mine[column] != row[column]:
                self.changed_fields[column] = self.changed_fields.get(column, 0) + 1
        here, there = mine.get("updated_at"), row.get("updated_at")
        if here is not None and there is not None and here != there:
            if there > here:
                self.newer += 1
            else:
                self.older += 1

    def how_changed(self) -> dict[str, Any]:
        """What the preview says of the changed rows (backup/views.py words it)."""
        return {"fields": self.changed_fields, "newer": self.newer, "older": self.older}

    def as_dict(self) -> dict[str, int]:
        return {key: getattr(self, key) for key in ("added", "changed", "unchanged", "kept")}


class _ImportLog:
    """The import's own change records. Numbered past every id the file's change log brings
    (read in the check), since those rows may come later in the file than the items."""

    def __init__(self, checked: Checked) -> None:
        here = Change.objects.aggregate(last=Max("pk"))["last"] or 0
        self.next_id = max(here, max(checked.ids["changes"], default=0)) + 1
        # The messages added, linked to their parents once all are in (backup/lineage.py).
        self.added_messages: list[int] = []

    def _record(self, spec: ItemKind, obj: Any, action: str, **fields: Any) -> None:
        if change_record(
            kind=spec.name, obj=obj, action=action, actor=IMPORT, pk=self.next_id, **fields
        ):
            self.next_id += 1

    def record(self, spec: ItemKind, old: Any, new: Any) -> None:
        """One item's change: its content, then a move into or out of the bin."""
        before, after = item_fields(spec, old), item_fields(spec, new)
        self._record(spec, new, Change.Action.UPDATE, before=before, after=after)
        if old.deleted_at is None and new.deleted_at is not None:
            self._record(spec, new, Change.Action.DELETE, before=after)
        elif old.deleted_at is not None and new.deleted_at is None:
            self._record(spec, new, Change.Action.RESTORE, after=after)


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
    for chunk in chunks(ids):
        for values in kind.model._base_manager.filter(pk__in=chunk).values_list(*columns):
            here[values[0]] = dict(zip(columns, values, strict=True))
    return here


def _insert(model: type[models.Model], rows: list[dict[str, Any]]) -> None:
    """Insert with the rows' own ids and dates, as loaddata's raw save does (no ``auto_now``
    stamp, no signal): one INSERT per row through the cursor's ``executemany`` (psycopg sends
    them pipelined), each value as its field prepares it for the database.

    Measured on 20,000 tasks and 20,000 messages (PostgreSQL, median of 3): 1.3-1.5x the
    private raw ``_insert`` this replaced, a few per cent of a whole import. Not ``bulk_create``:
    it stamps ``auto_now``/``auto_now_add`` with the time of the insert, and writing the file's
    dates back with ``bulk_update`` made the insert ten times slower; one multi-row INSERT with a
    parameter per value was twice as slow as this. The round-trip test compares every column of
    every table."""
    if not rows:
        return
    fields = list(model._meta.concrete_fields)
    quote = connection.ops.quote_name
    sql = "INSERT INTO {} ({}) VALUES ({})".format(
        quote(model._meta.db_table),
        ", ".join(quote(field.column) for field in fields),
        ", ".join(["%s"] * len(fields)),
    )
    with connection.cursor() as cursor:
        cursor.executemany(
            sql,
            [
                [
                    field.get_db_prep_save(getattr(obj, field.attname), connection)
                    for field in fields
                ]
                for obj in (model(**row) for row in rows)
            ],
        )


def _pausable(automation: dict[str, Any]) -> bool:
    """Running here, and reachable by automation_pause (not in the bin)."""
    return bool(automation["enabled"]) and automation["deleted_at"] is None


def _sort(
    kind: KindSpec, rows: list[dict[str, Any]], counts: Counts
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[int]]:
    """The rows to add, those to change, and the automations to pause; the rest counted."""
    compared = [column for column in kind.columns if column not in kind.kept]
    here = _here(kind, [row["id"] for row in rows])
    new: list[dict[str, Any]] = []
    changed: list[dict[str, Any]] = []
    pause: list[int] = []
    for row in rows:
        mine = here.get(row["id"])
        if mine is None:
            new.append(_fence_new(kind, row))
            counts.name(counts.added_titles, kind.name, row)
        elif all(mine[column] == row[column] for column in compared):
            counts.unchanged += 1
        elif kind.policy == "merge":
            changed.append({column: row[column] for column in compared})
            counts.note_change(kind.name, mine, row, compared)
        elif kind.policy == "automation" and _pausable(mine) and not row["enabled"]:
            pause.append(row["id"])
            counts.note_change(kind.name, mine, row, ["enabled"])
        else:
            counts.kept += 1
    return new, changed, pause


def _update(kind: KindSpec, changed: list[dict[str, Any]], log: _ImportLog) -> None:
    ids = [row["id"] for row in changed]
    spec = item_kind(kind.item) if kind.item else None
    old = kind.model._base_manager.in_bulk(ids) if spec else {}
    objs = [kind.model(**row) for row in changed]
    kind.model._base_manager.bulk_update(
        objs, [name for name in changed[0] if name != "id"], batch_size=200
    )
    if any(field.name == "version" for field in kind.model._meta.fields):
        # A changed item is a new version: an edit from before the restore is refused (409).
        kind.model._base_manager.filter(pk__in=ids).update(version=F("version") + 1)
    if spec is not None:
        for pk, obj in kind.model._base_manager.in_bulk(ids).items():
            log.record(spec, old[pk], obj)


def _apply_batch(
    kind: KindSpec, rows: list[dict[str, Any]], counts: Counts, log: _ImportLog
) -> list[int]:
    """Insert the new rows and write the changed ones; the ids of automations to pause."""
    new, changed, pause = _sort(kind, rows, counts)
    _insert(kind.model, new)
    if kind.model is Message:
        log.added_messages += [row["id"] for row in new]
    if changed:
        _update(kind, changed, log)
    counts.added += len(new)
    counts.changed += len(changed) + len(pause)
    return pause


def _batches(source: IO[bytes]) -> Iterator[tuple[KindSpec, list[dict[str, Any]]]]:
    """The file's rows again (checked already), BATCH_ROWS of one kind at a time."""
    source.seek(0)
    problems = Problems()
    kind, batch = KINDS[0], list[dict[str, Any]]()
    for name, index, raw in BackupReader(source).rows():
        if batch and (name != kind.name or len(batch) >= (kind.batch_rows or BATCH_ROWS)):
            yield kind, batch
            batch = []
        kind = BY_NAME[name]
        row = row_checked(kind, f"{name}[{index}]", raw, problems)
        if row is None:  # the file changed since it was checked
            problems.raise_any("The backup changed while it was read")
            raise AssertionError("unreachable")
        batch.append(row)
    if batch:
        yield kind, batch


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


def backup_apply(source: IO[bytes], checked: Checked, *, dry_run: bool) -> dict[str, Counts]:
    """Merge the checked backup in ``source`` in one transaction; a dry run rolls it back. Per
    kind, the counts."""
    counts = {kind.name: Counts() for kind in KINDS}
    try:
        with transaction.atomic():
            log = _ImportLog(checked)
            pause: list[int] = []
            mergers = {k.name: k.merger(dry_run) for k in KINDS if k.merger is not None}
            for kind, rows in _batches(source):
                if kind.name in mergers:  # not a table's rows (KindSpec.merger)
                    mergers[kind.name].add(rows, counts[kind.name])
                else:
                    pause += _apply_batch(kind, rows, counts[kind.name], log)
            for merger in mergers.values():
                merger.finish()
            messages_link(log.added_messages)
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
