"""The Undo a delete's message carries (talorys/lib/undo.py): only "undo <kind> <id>" is read
back as an item to restore; any other tag, or a tag with more in it, is no Undo at all."""

from __future__ import annotations

import pytest

from talorys.lib.undo import UndoTarget, undo_target


def test_the_item_is_read_back_from_the_message_tags():
    assert undo_target("undo task 12") == UndoTarget(kind="task", pk=12)


@pytest.mark.parametrize(
    "tags",
    [
        None,
        "",
        "success",
        "undo task",
        "undo task x",
        "undo Task 1",
        "undo task 1 extra",
        "x undo task 1",
        "undo task 1\n",
    ],
)
def test_anything_else_is_no_undo(tags):
    assert undo_target(tags) is None
