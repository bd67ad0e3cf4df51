"""Which message each message follows, for messages stored before they said so.

Until messages had a ``parent`` (agent/models.py), a conversation was a list ordered by id, and
what a regenerate or an edit took out was marked ``replaced_at`` with the time it left. That is
enough to rebuild the tree: at any moment the messages not yet replaced were one chain ordered
by id (a new message follows the last of them; a regenerate or an edit replaces a tail of it,
all at one time). So a message's parent is the nearest earlier message still in that chain
when the message itself left it (never, for one not replaced): not replaced, or replaced at the
same time or later.

Pure, over plain values: the migration that added ``parent`` (agent/migrations/0007) and the
import of a backup written before it (backup/importer.py) both use it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence


def _outlived(earlier: dt.datetime | None, replaced_at: dt.datetime | None) -> bool:
    """Whether a message replaced at ``earlier`` was still in the chain when one replaced at
    ``replaced_at`` left it (None: never replaced)."""
    if earlier is None:
        return True
    return replaced_at is not None and earlier >= replaced_at


def chain_parents(rows: Sequence[tuple[int, dt.datetime | None]]) -> dict[int, int | None]:
    """Each message's parent id (None for a first message), from one conversation's
    ``(id, replaced_at)`` rows in id order."""
    parents: dict[int, int | None] = {}
    for index, (pk, replaced_at) in enumerate(rows):
        parents[pk] = next(
            (rows[j][0] for j in range(index - 1, -1, -1) if _outlived(rows[j][1], replaced_at)),
            None,
        )
    return parents
