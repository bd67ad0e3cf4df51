"""The order of each conversation's turns in the recall index: which slot came just before.

A message's entry has its conversation as ``parent_id``; its turns are ordered by id (as
``Message``'s default ordering is). Ranking reads ``prev`` to score a reply with the turn it
answers (memory/recall/priors.py). Kept in step with the index's slots as entries are added and
killed: a slot's previous turn is always a live slot of the same conversation, or -1.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left

import numpy as np


class Threads:
    __slots__ = ("_ids", "_slots", "prev")

    def __init__(self) -> None:
        self.prev = array("i")  # per slot: the slot of the turn before it in its conversation
        # Per conversation: its live turns' object ids, ascending, and their slots alike.
        self._ids: dict[int, list[int]] = {}
        self._slots: dict[int, list[int]] = {}

    def add(self, slot: int, *, parent_id: int | None, object_id: int) -> None:
        """Record a new slot (slots are added in increasing order, one call for each)."""
        self.prev.append(-1)
        if parent_id is None:
            return
        ids = self._ids.setdefault(parent_id, [])
        slots = self._slots.setdefault(parent_id, [])
        at = bisect_left(ids, object_id)
        ids.insert(at, object_id)
        slots.insert(at, slot)
        if at > 0:
            self.prev[slot] = slots[at - 1]
        if at + 1 < len(slots):
            self.prev[slots[at + 1]] = slot

    def remove(self, slot: int, *, parent_id: int | None, object_id: int) -> None:
        """Unlink a killed slot: the turn after it now follows the one before it."""
        if parent_id is None or parent_id not in self._ids:
            return
        ids, slots = self._ids[parent_id], self._slots[parent_id]
        at = bisect_left(ids, object_id)
        if at >= len(ids) or slots[at] != slot:
            return
        if at + 1 < len(slots):
            self.prev[slots[at + 1]] = self.prev[slot]
        self.prev[slot] = -1
        del ids[at], slots[at]
        if not ids:
            del self._ids[parent_id], self._slots[parent_id]

    def previous(self) -> np.ndarray:
        """``prev`` as a zero-copy int32 view (read under the index's lock)."""
        return np.frombuffer(self.prev, dtype=np.int32)
