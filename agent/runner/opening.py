"""The first model step's heartbeat as a read: what the turn needs of its conversation's row (its
summary and model), the settings' version and the recall index's clock come back with the check itself, one statement
instead of four."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from django.db import connection
from django.db.models import Field, Model, Subquery
from django.db.models.functions import Coalesce

from agent.models import Conversation
from memory import selectors as memory_selectors
from talorys.owner.models import OwnerSettings


@dataclass(frozen=True)
class Opening:
    summary: str
    # The model the conversation asks ("" for the default: services.conversation_model_set).
    model: str
    # None: no settings row yet (talorys.owner.selectors.owner_settings_current).
    settings_version: int | None
    # The recall index's clock, for recall's lazy pass (None: no index yet).
    index_clock: dict[str, Any] | None


def opening_read(*, conversation_id: int, turn_id: str) -> Opening | None:
    """services.turn_heartbeat's check, without renewing (the claim set the lease a moment
    ago), with the running summary, the settings' version and the index's clock; None when the
    turn must stop.

    A statement written once per process (``_opening_sql``), not a queryset: Django builds and
    compiles one with these subqueries in about 1.5 ms, five times what PostgreSQL takes to
    answer it, and this one is on the path to every turn's first text."""
    with connection.cursor() as cursor:
        cursor.execute(_opening_sql(), [conversation_id, turn_id])
        row = cursor.fetchone()
    if row is None:
        return None
    return Opening(
        summary=row[0],
        model=row[1],
        settings_version=row[2],
        index_clock=memory_selectors.recall_clock_of(row[3:]),
    )


@functools.cache
def _opening_sql() -> str:
    quote = connection.ops.quote_name

    def column(model: type[Model], name: str) -> str:
        field = model._meta.get_field(name)
        assert isinstance(field, Field) and field.column
        return quote(field.column)

    join, clock = memory_selectors.recall_clock_join("clock")
    version = (
        f"(SELECT s.{column(OwnerSettings, 'version')} FROM "
        f"{quote(OwnerSettings._meta.db_table)} s WHERE s.{column(OwnerSettings, 'id')} = 1)"
    )
    return (
        f"SELECT c.{column(Conversation, 'summary')}, c.{column(Conversation, 'model')}, "
        f"{version}, {', '.join(clock)} "
        f"FROM {quote(Conversation._meta.db_table)} c {join} "
        f"WHERE c.{column(Conversation, 'id')} = %s AND c.{column(Conversation, 'turn_id')} = %s "
        f"AND NOT c.{column(Conversation, 'turn_cancel_requested')}"
    )


def summary_upto(conversation_id: int) -> Coalesce:
    """The id the running summary covers messages up to (0: none), as a subquery: the history is
    read beside the opening read, which brings the summary, and this turn alone writes both."""
    return Coalesce(
        Subquery(Conversation.objects.filter(pk=conversation_id).values("summary_upto")[:1]), 0
    )
