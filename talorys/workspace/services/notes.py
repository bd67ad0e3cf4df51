"""The owner's notes: create, change, append, rename, tick a task-list item, bin and restore."""

from __future__ import annotations

from typing import Any, TypedDict, Unpack

from talorys.history.bin import bin_move_in, bin_move_out
from talorys.history.kinds import ItemKind, register_kind
from talorys.lib.actors import OWNER, Actor
from talorys.lib.errors import ValidationFailed
from talorys.lib.markdown import task_items
from talorys.lib.tasklists import tick
from talorys.lib.validation import clean_text
from talorys.workspace.models import Note
from talorys.workspace.selectors import note_get
from talorys.workspace.services.common import check_version, item_create, item_edit, item_texts


class NoteChanges(TypedDict, total=False):
    """What note_update may change; a field left out keeps its value."""

    title: str
    content: str | None


def _note_clean(changes: NoteChanges) -> dict[str, Any]:
    return item_texts(changes, ("title", Note.TITLE_MAX), ("content", Note.CONTENT_MAX))


def note_create(*, title: str, content: str = "", actor: Actor = OWNER) -> Note:
    return item_create(NOTE, actor, _note_clean({"title": title, "content": content}))


def note_update(
    *,
    note_id: int,
    actor: Actor = OWNER,
    version: int | None = None,
    **changes: Unpack[NoteChanges],
) -> Note:
    return item_edit(
        NOTE, note_id, actor=actor, version=version, data=lambda note: _note_clean(changes)
    )


def _appended(content: str, text: str) -> dict[str, Any]:
    content = f"{content.rstrip()}\n\n{text}" if content.strip() else text
    if len(content) > Note.CONTENT_MAX:
        raise ValidationFailed(f"The note would be longer than {Note.CONTENT_MAX} characters.")
    return {"content": content}


def note_append(*, note_id: int, text: str, actor: Actor = OWNER) -> Note:
    """Append a paragraph. Locked so that two appends never lose each other's text."""
    text = clean_text(text, field="text", max_length=Note.CONTENT_MAX)
    return item_edit(NOTE, note_id, actor=actor, data=lambda note: _appended(note.content, text))


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
