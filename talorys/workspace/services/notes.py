"""The owner's notes: create, change, append, rename, tick a task-list item, bin and restore."""

from __future__ import annotations

from typing import TypedDict, Unpack

from django.db import transaction

from talorys.history.bin import bin_move_in, bin_move_out
from talorys.history.kinds import ItemKind, item_fields, register_kind
from talorys.lib.actors import OWNER, Actor
from talorys.lib.errors import NotFound, ValidationFailed
from talorys.lib.markdown import task_items
from talorys.lib.tasklists import tick
from talorys.lib.updates import model_update
from talorys.lib.validation import clean_line, clean_text
from talorys.workspace.models import Note
from talorys.workspace.selectors import note_get
from talorys.workspace.services.common import check_version, record_created, record_updated


def note_create(*, title: str, content: str = "", actor: Actor = OWNER) -> Note:
    with transaction.atomic():
        note = Note.objects.create(
            title=clean_line(title, field="title", max_length=Note.TITLE_MAX),
            content=clean_text(
                content, field="content", max_length=Note.CONTENT_MAX, required=False
            ),
        )
        record_created(NOTE, note, actor)
    return note


class NoteChanges(TypedDict, total=False):
    """What note_update may change; a field left out keeps its value."""

    title: str
    content: str | None


def _note_clean(changes: NoteChanges) -> dict[str, object]:
    data: dict[str, object] = {}
    if "title" in changes:
        data["title"] = clean_line(changes["title"], field="title", max_length=Note.TITLE_MAX)
    if "content" in changes:
        data["content"] = clean_text(
            changes["content"] or "", field="content", max_length=Note.CONTENT_MAX, required=False
        )
    return data


def note_update(
    *,
    note_id: int,
    actor: Actor = OWNER,
    version: int | None = None,
    **changes: Unpack[NoteChanges],
) -> Note:
    """Locked like note_append, so a rewrite and an append never lose each other's change.
    ``version``: the one the caller read; a note changed since is refused (Conflict). Every
    call counts as an edit (a new version and a change log entry), even one that changes
    nothing."""
    with transaction.atomic():
        note = Note.objects.live().select_for_update().filter(pk=note_id).first()
        if note is None:
            raise NotFound(f"Note {note_id} does not exist.")
        check_version(note, version, noun="note")
        before = item_fields(NOTE, note)
        data = _note_clean(changes) | {"version": note.version + 1}
        model_update(instance=note, fields=("title", "content", "version"), data=data)
        record_updated(NOTE, note, before, actor)
    return note


def note_append(*, note_id: int, text: str, actor: Actor = OWNER) -> Note:
    """Append a paragraph. Locked so that two appends never lose each other's text."""
    text = clean_text(text, field="text", max_length=Note.CONTENT_MAX)
    with transaction.atomic():
        note = Note.objects.live().select_for_update().filter(pk=note_id).first()
        if note is None:
            raise NotFound(f"Note {note_id} does not exist.")
        before = item_fields(NOTE, note)
        content = f"{note.content.rstrip()}\n\n{text}" if note.content.strip() else text
        if len(content) > Note.CONTENT_MAX:
            raise ValidationFailed(f"The note would be longer than {Note.CONTENT_MAX} characters.")
        note.content = content
        note.version += 1
        note.save(update_fields=["content", "updated_at", "version"])
        record_updated(NOTE, note, before, actor)
    return note


def note_task_tick(
    *, note_id: int, index: int, ticked: bool, version: int, actor: Actor = OWNER
) -> Note:
    """Tick (or untick) the ``index``-th checkbox the note shows ("- [ ] cheese" becomes
    "- [x] cheese"): an edit like any other (note_update: a new version and a change log
    entry). ``version`` is the one the page showed and is required: the index counts the boxes
    of that version, so a tick from a stale page is refused (Conflict) rather than landing on
    another line."""
    note = note_get(note_id=note_id)
    check_version(note, version, noun="note")
    items = task_items(note.content)
    if not 0 <= index < len(items):
        raise ValidationFailed(
            f"The note has no checkbox number {index + 1} (it has {len(items)}). "
            "Reload the page and tick again."
        )
    content = tick(note.content, items[index], ticked=ticked)
    # The lock and the version check again: the note may change between the read and here.
    return note_update(note_id=note_id, content=content, version=version, actor=actor)


def note_rename(
    *, note_id: int, title: str, actor: Actor = OWNER, version: int | None = None
) -> Note:
    return note_update(note_id=note_id, title=title, actor=actor, version=version)


def note_delete(*, note_id: int, actor: Actor = OWNER) -> None:
    """To the bin, restorable for BIN_RETENTION."""
    bin_move_in(NOTE, note_id, actor)


def note_restore(*, note_id: int, actor: Actor = OWNER) -> None:
    """Out of the bin, as it was."""
    bin_move_out(NOTE, note_id, actor)


NOTE = ItemKind(
    name="note",
    model=Note,
    fields=("title", "content"),
    title=lambda note: note.title,
    restore=lambda *, pk, actor, change: note_restore(note_id=pk, actor=actor),
    delete=lambda *, pk, actor: note_delete(note_id=pk, actor=actor),
    apply=lambda *, pk, values, actor: note_update(note_id=pk, actor=actor, **values),
)
register_kind(NOTE)
