"""A conversation brought in from another chat tool (imports/ calls it, inside its import's
transaction): ``Origin.IMPORT``, so its messages are data, never retried or edited as live
input (rerun.retry_target), with the export's own title and times."""

from __future__ import annotations

import datetime as dt
from typing import TypedDict

from django.db import connection

from agent.models import Conversation, Message, Origin
from agent.services import conversation_title
from talorys.lib.validation import one_line
from talorys.providers.base import without_nul

# Rows per INSERT.
WRITE_BATCH = 500


class ImportedMessage(TypedDict):
    role: str  # Message.Role
    content: str
    created_at: dt.datetime | None  # None: the one before's (or the conversation's)


def conversation_from_import(
    *,
    title: str,
    created_at: dt.datetime,
    updated_at: dt.datetime,
    messages: list[ImportedMessage],
) -> tuple[Conversation, list[Message]]:
    """The conversation and its messages, one chain in the order given (each message's parent
    the one before: the branch the export showed). Its title is the export's (else its first
    words), final: no turn retitles it. Call inside a transaction."""
    title = one_line(without_nul(title)).strip()[: Conversation.TITLE_MAX]
    if not title and messages:
        title = conversation_title(text=messages[0]["content"])
    conversation = Conversation.objects.create(
        title=title or "Imported conversation",
        title_source=Conversation.TitleSource.MODEL,
        origin=Origin.IMPORT,
    )
    # auto_now_add and auto_now stamp the insert's time: the export's times are written after.
    Conversation.objects.filter(pk=conversation.pk).update(
        created_at=created_at, updated_at=updated_at
    )
    conversation.created_at, conversation.updated_at = created_at, updated_at
    rows = [
        Message(
            conversation=conversation,
            role=message["role"],
            content=without_nul(message["content"]),
            origin=Origin.IMPORT,
        )
        for message in messages
    ]
    Message.objects.bulk_create(rows, batch_size=WRITE_BATCH)
    previous: Message | None = None
    when = created_at
    for row, message in zip(rows, messages, strict=True):
        when = message["created_at"] or when
        row.parent, row.created_at = previous, when
        previous = row
    _times_and_parents(rows)
    return conversation, rows


def _times_and_parents(rows: list[Message]) -> None:
    """Write each new row's own ``created_at`` and ``parent`` (known once the rows have ids):
    one UPDATE per row through the cursor's ``executemany`` (psycopg pipelines them).

    Not ``bulk_update``: its CASE WHEN per row and field was 3.5 s of a 6.2 s import of 3 MiB
    (2,240 messages), spent building the expressions in Python. ``updated_at`` stays the
    insert's: recall's lazy pass reads it as "written since"."""
    quote = connection.ops.quote_name
    created = Message._meta.get_field("created_at")
    sql = "UPDATE {} SET {} = %s, {} = %s WHERE {} = %s".format(
        quote(Message._meta.db_table), quote("created_at"), quote("parent_id"), quote("id")
    )
    with connection.cursor() as cursor:
        cursor.executemany(
            sql,
            [
                (created.get_db_prep_save(row.created_at, connection), row.parent_id, row.pk)
                for row in rows
            ],
        )
