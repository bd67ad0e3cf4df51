"""The recall index's clock (IndexState's row) for a caller that reads it in a statement it makes
anyway, and passes it to the lazy pass (writer.reindex_recent's ``clock``): a turn's first
heartbeat does (agent/runner/opening.py), a statement fewer before its first token."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

from django.db import connection
from django.db.models import Field
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from memory.models import IndexState
from memory.recall.index import STATE_COLUMNS

# The clock as reindex_recent reads it; READ_CLOCK: the pass reads it itself.
CLOCK_COLUMNS = ("recent_since", *STATE_COLUMNS)
READ_CLOCK = object()


def clock_join(alias: str) -> tuple[str, list[str]]:
    """SQL for the clock in another statement: a LEFT JOIN of the one row as ``alias``, and the
    expressions of its columns in CLOCK_COLUMNS order (NULL when there is no row yet)."""
    quote = connection.ops.quote_name

    def column(name: str) -> str:
        field = IndexState._meta.get_field(name)
        assert isinstance(field, Field) and field.column
        return f"{alias}.{quote(field.column)}"

    table = quote(IndexState._meta.db_table)
    return f"LEFT JOIN {table} {alias} ON {column('id')} = 1", [column(n) for n in CLOCK_COLUMNS]


def clock_of(values: Sequence[Any]) -> dict[str, Any] | None:
    """The clock from the values ``clock_join``'s columns read (None: no row yet). Read by a bare
    cursor, so without the ORM's conversions: SQLite gives the time as text or naive (UTC)."""
    clock = dict(zip(CLOCK_COLUMNS, values, strict=True))
    if clock["generation"] is None:
        return None
    since = clock["recent_since"]
    if isinstance(since, str):
        since = parse_datetime(since)
    if isinstance(since, dt.datetime) and timezone.is_naive(since):
        since = timezone.make_aware(since, dt.UTC)
    clock["recent_since"] = since
    return clock
