"""The bin, over every kind: what has been there longer than its retention goes for good."""

from __future__ import annotations

import datetime as dt

from talorys.workspace import history
from talorys.workspace.history import BIN_RETENTION


def bin_purge(*, older_than: dt.timedelta = BIN_RETENTION) -> int:
    """Delete for good what has been in the bin longer than ``older_than``: every kind."""
    return history.bin_purge(older_than=older_than)
