"""Imports' writes: the import itself (``import_file``: a dry run is the preview), its bin and
revert (``import_delete``, ``import_restore``, the ``import`` kind), and recall's indexing of
what it added (``import_index``).

Idempotent per item: each conversation and note an import adds is remembered by where it came
from (``ImportedItem``: the export's kind and the item's own id there; a note's is its path in
the vault). Met again, in the same file or a newer export, it is "here already" and left as it
is here, even when it changed in the export since: the owner may have changed it here, and
adding the export's newer messages into a conversation that another import made would leave
neither import revertable as a whole. The preview says how many of those changed ("3 have
newer messages in the file"); to take the newer ones, delete that conversation for good (empty
it from the bin) and import again. The bin's purge deletes the ``ImportedItem`` rows with their
items, so a purged item is added again.

One transaction: a file refused or failing midway (broken JSON after the first conversations, a
damaged zip entry) writes nothing. One change-log entry: the ``ImportRun``'s create, recorded as
``import``; the items' own creates are recorded as ``import:<id>`` (kept as each item's
history, not listed in the change log). Reverting the entry bins the run and every item it
added that is still live; restoring the run from the bin (or reverting that) brings back
exactly those.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import IO, Any, TypedDict

from django.db import transaction
from django.db.models import F

from agent.imported_conversations import ImportedMessage, conversation_from_import
from agent.models import Conversation
from agent.services import conversation_delete, conversation_restore
from files.models import File
from files.services import file_delete, file_restore
from imports.models import ImportedItem, ImportRun, Source
from imports.readers.archive import Export, export_open
from imports.readers.items import Chat, VaultFile, VaultNote
from imports.readers.vault import with_tags
from imports.vault_files import vault_file_add
from memory.services import reindex_items
from talorys.history.bin import bin_move_in, bin_move_out, latest_delete
from talorys.history.changes import change_record, change_revert
from talorys.history.kinds import ItemKind, item_fields, register_kind
from talorys.history.models import Change
from talorys.lib.actors import OWNER, Actor
from talorys.lib.errors import NotFound
from talorys.lib.validation import one_line
from talorys.providers.base import without_nul
from talorys.workspace.models import Note
from talorys.workspace.services.notes import note_create, note_delete, note_restore

# The titles a preview shows of what the import would add.
FIRST_MAX = 10
# Items per recall batch (each one transaction of the index, and a step of ``indexed``).
INDEX_BATCH = 500
REFUSED_SHOWN = 5  # the refused attachments a report names; the rest are counted
IMPORT_SOURCE = "import"  # the run's entry in the change log (listed, as a backup import's)


class ImportReport(TypedDict):
    dry_run: bool
    id: int | None  # the ImportRun, once applied
    source: str
    kind: str  # the source in words
    counts: dict[str, int]  # in the file: conversations, messages, notes, attachments
    # What the import adds (would add): conversations, messages, notes, files (a vault's
    # attachments; a preview counts them all, as it reads no file's content).
    added: dict[str, int]
    here: dict[str, int]  # met again: conversations, notes, files; "changed": newer messages
    first: list[str]  # the titles of the first items it adds
    lines: list[str]  # what the owner should know, in sentences


def counted(n: int, noun: str) -> str:
    """ "1 note", "3 notes"."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


class _Tally:
    def __init__(self, export: Export) -> None:
        self.counts = {
            "conversations": 0,
            "messages": 0,
            "notes": 0,
            "attachments": export.attachments,
        }
        self.added = {"conversations": 0, "messages": 0, "notes": 0, "files": 0}
        self.here = {"conversations": 0, "notes": 0, "files": 0, "changed": 0}
        self.refused: list[str] = []  # attachments the files app refused, with why
        self.first: list[str] = []
        self.too_long = export.too_long

    def adding(self, title: str) -> None:
        if len(self.first) < FIRST_MAX:
            self.first.append(title)

    def lines(self, *, dry_run: bool) -> list[str]:
        lines = []
        if self.added["files"]:
            verb = "would be" if dry_run else "were"
            lines.append(f"{counted(self.added['files'], 'attachment')} {verb} added to Files.")
        if self.refused:
            shown = "; ".join(self.refused[:REFUSED_SHOWN])
            more = len(self.refused) - REFUSED_SHOWN
            lines.append(
                f"{counted(len(self.refused), 'attachment')} not imported: {shown}"
                + (f"; and {more} more." if more > 0 else "")
            )
        if self.too_long:
            lines.append(
                f"{counted(self.too_long, 'note')} longer than {Note.CONTENT_MAX} characters "
                "not imported."
            )
        met = self.here["conversations"] + self.here["notes"] + self.here["files"]
        if met:
            lines.append(
                f"{counted(met, 'item')} already here from an earlier import: left as they are."
            )
        if self.here["changed"]:
            lines.append(
                f"{counted(self.here['changed'], 'conversation')} of those with newer messages "
                "in the file: to take them, delete the conversation for good and import again."
            )
        if not any(self.added.values()):
            lines.append("Nothing new to import." if dry_run else "Nothing new was imported.")
        return lines


def _known(source: str, kind: str, ids: Iterable[str]) -> dict[str, ImportedItem]:
    rows = ImportedItem.objects.filter(source=source, kind=kind, external_id__in=list(ids))
    return {row.external_id: row for row in rows}


def _message_id(chat: Chat, turn_id: str) -> str:
    # Message ids are unique within their conversation only in some exports (Open WebUI's index).
    return f"{chat.external_id}/{turn_id}"[: ImportedItem.EXTERNAL_ID_MAX]


def _chat(chat: Chat, source: str, tally: _Tally, run: ImportRun | None) -> None:
    tally.counts["conversations"] += 1
    tally.counts["messages"] += len(chat.turns)
    external = chat.external_id[: ImportedItem.EXTERNAL_ID_MAX]
    if external in _known(source, ImportedItem.Kind.CONVERSATION, [external]):
        tally.here["conversations"] += 1
        ids = [_message_id(chat, turn.external_id) for turn in chat.turns]
        if len(_known(source, ImportedItem.Kind.MESSAGE, ids)) < len(ids):
            tally.here["changed"] += 1
        return
    if not chat.turns:
        return  # nothing said in it: not a conversation to keep
    tally.added["conversations"] += 1
    tally.added["messages"] += len(chat.turns)
    tally.adding(one_line(chat.title or chat.turns[0].text[:80]).strip())
    if run is not None:
        _chat_write(chat, source, run)


def _chat_write(chat: Chat, source: str, run: ImportRun) -> None:
    first = next((turn.when for turn in chat.turns if turn.when), None)
    created = chat.created or first or run.created_at
    last = next((turn.when for turn in reversed(chat.turns) if turn.when), None)
    messages: list[ImportedMessage] = [
        {"role": turn.role, "content": turn.text, "created_at": turn.when} for turn in chat.turns
    ]
    conversation, rows = conversation_from_import(
        title=chat.title,
        created_at=created,
        updated_at=chat.updated or last or created,
        messages=messages,
    )
    items = [
        ImportedItem(
            run=run,
            source=source,
            kind=ImportedItem.Kind.CONVERSATION,
            external_id=chat.external_id[: ImportedItem.EXTERNAL_ID_MAX],
            conversation=conversation,
        )
    ]
    items += [
        ImportedItem(
            run=run,
            source=source,
            kind=ImportedItem.Kind.MESSAGE,
            external_id=_message_id(chat, turn.external_id),
            message=row,
        )
        for turn, row in zip(chat.turns, rows, strict=True)
    ]
    # A message id met twice in one export (a hostile file) is kept once.
    ImportedItem.objects.bulk_create(items, ignore_conflicts=True)


def _note(note: VaultNote, tally: _Tally, run: ImportRun | None) -> None:
    tally.counts["notes"] += 1
    external = note.external_id[: ImportedItem.EXTERNAL_ID_MAX]
    if external in _known(Source.VAULT, ImportedItem.Kind.NOTE, [external]):
        tally.here["notes"] += 1
        return
    title = one_line(note.title).strip()[: Note.TITLE_MAX] or "Untitled"
    tally.added["notes"] += 1
    tally.adding(title)
    if run is None:
        return
    actor = Actor(source=f"{IMPORT_SOURCE}:{run.pk}")
    made = note_create(title=title, content=with_tags(note)[: Note.CONTENT_MAX], actor=actor)
    when = note.when or run.created_at
    Note.objects.filter(pk=made.pk).update(created_at=when, updated_at=when)
    ImportedItem.objects.create(
        run=run, source=Source.VAULT, kind=ImportedItem.Kind.NOTE, external_id=external, note=made
    )


def _attachment(attachment: VaultFile, tally: _Tally, run: ImportRun | None) -> None:
    """A vault's attachment as one of the owner's files, unless this vault's import brought it
    already; one the files app refuses (its type, its size) is named in the report."""
    external = attachment.external_id[: ImportedItem.EXTERNAL_ID_MAX]
    if external in _known(Source.VAULT, ImportedItem.Kind.FILE, [external]):
        tally.here["files"] += 1
        return
    refused = vault_file_add(attachment, run=run) if run is not None else None
    if isinstance(refused, str):
        tally.refused.append(f"{attachment.path} ({refused})")
    else:
        tally.added["files"] += 1


def _read(export: Export, tally: _Tally, run: ImportRun | None) -> None:
    for item in export.items():
        if isinstance(item, Chat):
            _chat(item, export.source, tally, run)
        else:
            _note(item, tally, run)
    for attachment in export.files():
        _attachment(attachment, tally, run)


def import_file(*, stream: IO[bytes], name: str = "", dry_run: bool = False) -> ImportReport:
    """Import the export in ``stream`` (a seekable binary file), or with ``dry_run`` only say
    what it holds and what the import would add. Refused with ValidationFailed (nothing
    written) when it is not an export Talorys reads, or is unsafe to unpack."""
    export = export_open(stream)
    tally = _Tally(export)
    run = None
    if dry_run:
        _read(export, tally, None)
    else:
        with transaction.atomic():
            run = ImportRun.objects.create(
                source=export.source, name=one_line(without_nul(name))[: ImportRun.NAME_MAX]
            )
            _read(export, tally, run)
            _run_finish(run, tally)
            # The owner is told what came in once it is there: recall indexes it meanwhile.
            transaction.on_commit(lambda: _index_later(run.pk), robust=True)
    return {
        "dry_run": dry_run,
        "id": run.pk if run else None,
        "source": export.source,
        "kind": Source(export.source).label,
        "counts": tally.counts,
        "added": tally.added,
        "here": tally.here,
        "first": tally.first,
        "lines": tally.lines(dry_run=dry_run),
    }


def _run_finish(run: ImportRun, tally: _Tally) -> None:
    run.counts = {**tally.added, "attachments": tally.counts["attachments"]}
    run.notes = tally.lines(dry_run=False)
    run.total = tally.added["messages"] + tally.added["notes"] + tally.added["files"]
    run.save(update_fields=["counts", "notes", "total"])
    change_record(
        kind=IMPORT.name,
        obj=run,
        action=Change.Action.CREATE,
        actor=Actor(source=IMPORT_SOURCE),
        after=item_fields(IMPORT, run),
        detail={"counts": run.counts},
    )


def _index_later(import_id: int) -> None:
    from imports.tasks import index_import  # the task module imports this one

    index_import.delay(import_id)


def import_index(*, import_id: int) -> ImportRun:
    """Recall's entries for the messages and notes the import added, INDEX_BATCH at a time,
    counting ``indexed`` as each batch is in (GET /api/imports/{id} shows it). Run again, it
    starts over: entries already right are left as they are."""
    run = ImportRun.objects.filter(pk=import_id).first()
    if run is None:
        raise NotFound(f"Import {import_id} does not exist.")
    ImportRun.objects.filter(pk=import_id).update(indexed=0)
    rows = ImportedItem.objects.filter(run_id=import_id).exclude(
        kind=ImportedItem.Kind.CONVERSATION
    )
    after = 0
    while batch := list(
        rows.filter(pk__gt=after)
        .order_by("pk")
        .values_list("pk", "message_id", "note_id")[:INDEX_BATCH]
    ):
        after = batch[-1][0]
        messages = {message for _, message, _ in batch if message}
        notes = {note for _, _, note in batch if note}
        reindex_items(kind="message", ids=messages)
        reindex_items(kind="note", ids=notes)
        ImportRun.objects.filter(pk=import_id).update(indexed=F("indexed") + len(batch))
    run.refresh_from_db()
    return run


def import_delete(*, import_id: int, actor: Actor = OWNER) -> None:
    """The import to the bin, with every conversation and note it added that is still live
    (each through its own kind's delete, so each is in the bin and restorable on its own too).
    What it binned is kept on the delete, for the restore."""
    with transaction.atomic():
        run = ImportRun.objects.live().select_for_update().filter(pk=import_id).first()
        if run is None:
            raise NotFound(f"Import {import_id} does not exist.")
        items = ImportedItem.objects.filter(run_id=import_id)
        conversations = list(
            items.filter(
                conversation__deleted_at__isnull=True, conversation__isnull=False
            ).values_list("conversation_id", flat=True)
        )
        notes = list(
            items.filter(note__deleted_at__isnull=True, note__isnull=False).values_list(
                "note_id", flat=True
            )
        )
        files = list(
            items.filter(file__deleted_at__isnull=True, file__isnull=False).values_list(
                "file_id", flat=True
            )
        )
        for conversation_id in conversations:
            conversation_delete(conversation_id=conversation_id, actor=actor)
        for note_id in notes:
            note_delete(note_id=note_id, actor=actor)
        for file_id in files:
            file_delete(file_id=file_id, actor=actor)
        detail = {"conversations": conversations, "notes": notes, "files": files}
        bin_move_in(IMPORT, import_id, actor, detail=detail)


def import_revert(*, import_id: int, actor: Actor = OWNER) -> list[Change]:
    """Revert the import's entry in the change log (``change_revert``: refused once it was
    reverted, or once the import is in the bin)."""
    entry = Change.objects.filter(
        kind=IMPORT.name, object_id=import_id, action=Change.Action.CREATE
    ).first()
    if entry is None:
        raise NotFound(f"Import {import_id} does not exist.")
    return change_revert(change_id=entry.pk, actor=actor)


def import_restore(*, import_id: int, actor: Actor = OWNER, change: Change | None = None) -> None:
    """Out of the bin, with what its delete binned that is still in the bin."""
    with transaction.atomic():
        change = change or latest_delete(IMPORT.name, import_id)
        bin_move_out(IMPORT, import_id, actor)
        detail: dict[str, Any] = change.detail if change else {}
        binned = Conversation.objects.filter(
            pk__in=detail.get("conversations", []), deleted_at__isnull=False
        )
        for conversation_id in binned.values_list("pk", flat=True):
            conversation_restore(conversation_id=conversation_id, actor=actor)
        notes = Note.objects.filter(pk__in=detail.get("notes", []), deleted_at__isnull=False)
        for note_id in notes.values_list("pk", flat=True):
            note_restore(note_id=note_id, actor=actor)
        files = File.objects.filter(pk__in=detail.get("files", []), deleted_at__isnull=False)
        for file_id in files.values_list("pk", flat=True):
            file_restore(file_id=file_id, actor=actor)


def _title(run: ImportRun) -> str:
    added = run.counts or {}
    parts = [
        counted(added[f"{noun}s"], noun)
        for noun in ("conversation", "note", "file")
        if added.get(f"{noun}s")
    ]
    return f"{run}" + (f" ({', '.join(parts)})" if parts else "")


IMPORT = ItemKind(
    name="import",
    model=ImportRun,
    fields=("name",),
    title=_title,
    restore=lambda *, pk, actor, change: import_restore(import_id=pk, actor=actor, change=change),
    delete=lambda *, pk, actor: import_delete(import_id=pk, actor=actor),
)
register_kind(IMPORT)
