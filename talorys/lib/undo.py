"""Undo where the action happens: a page that moved an item to the bin says so with a message
that carries the item (``say_binned``), and templates/base.html shows it with an Undo button that
posts the restore to /bin/ (the bin's own restore, ``bin_restore``) and comes back to the page.
A page whose action was an edit (completing a repeating task, which moves its due date) carries
the change instead (``say_revertible``): its Undo posts the revert to /changes/ (the change log's
own revert, ``change_revert``, refused if the item changed since).

The item rides in the message's ``extra_tags`` ("undo task 12"), so it lives exactly as long as
the message: shown once, on the page after the delete's redirect. Only a kind name and a number
are read back from it (``undo_target``)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.contrib import messages
from django.http import HttpRequest

_TAG = re.compile(r"^undo ([a-z_]+) (\d+)$")


# The kind name a revertible message carries: "undo change 34" reverts change 34.
CHANGE = "change"


@dataclass(frozen=True)
class UndoTarget:
    kind: str  # the bin's name of the kind: "task", as in /api/bin/task/12; or CHANGE
    pk: int

    @property
    def reverts(self) -> bool:
        """Undo reverts a change (pk is the change's), rather than restoring from the bin."""
        return self.kind == CHANGE


def say_binned(request: HttpRequest, text: str, *, kind: str, pk: int) -> None:
    """``text`` above the next page, with an Undo that restores ``kind`` ``pk`` from the bin."""
    messages.success(request, text, extra_tags=f"undo {kind} {pk}")


def say_revertible(request: HttpRequest, text: str, *, change_id: int) -> None:
    """``text`` above the next page, with an Undo that reverts change ``change_id``."""
    messages.success(request, text, extra_tags=f"undo {CHANGE} {change_id}")


def undo_target(extra_tags: str | None) -> UndoTarget | None:
    """The item a message's Undo restores, or None for any other message."""
    match = _TAG.fullmatch(extra_tags or "")
    return UndoTarget(kind=match[1], pk=int(match[2])) if match else None
