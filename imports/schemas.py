"""/api/imports's shapes: the report of an import (or of its dry run), and an import as listed."""

from __future__ import annotations

import datetime as dt

from ninja import Schema

from imports.models import ImportRun


class ImportReportOut(Schema):
    dry_run: bool
    id: int | None  # the import made; None for a dry run
    source: str  # chatgpt | claude | openwebui | vault
    kind: str  # the same, in words
    counts: dict[str, int]  # in the file: conversations, messages, notes, attachments
    added: dict[str, int]  # added (or would be): conversations, messages, notes
    here: dict[str, int]  # already here from an earlier import: conversations, notes, changed
    first: list[str]  # the titles of the first items added
    lines: list[str]  # what the owner should know, in sentences


class ImportOut(Schema):
    id: int
    source: str
    kind: str
    name: str
    counts: dict[str, int]  # added: conversations, messages, notes, files; attachments in all
    lines: list[str]
    total: int  # messages and notes recall indexes
    indexed: int  # of those, indexed so far
    created_at: dt.datetime
    reverted: bool  # in the bin: reverted or deleted, restorable there

    @staticmethod
    def resolve_kind(obj: ImportRun) -> str:
        return obj.get_source_display()

    @staticmethod
    def resolve_lines(obj: ImportRun) -> list[str]:
        return list(obj.notes)

    @staticmethod
    def resolve_reverted(obj: ImportRun) -> bool:
        return obj.deleted_at is not None
