"""The backup document, version 1: its envelope, its kinds, and the schema each row must meet.

A backup is one JSON object::

    {"format": "talorys-backup", "version": 1, "created_at": "<ISO 8601, UTC>",
     "app_version": "0.1.0", "data": {"projects": [{...}, ...], "tasks": [...], ...},
     "checksum": "sha256:<hex>"}

``data`` maps each kind (``KINDS``, in that order: referenced kinds come first) to its rows. A
row is the table's columns under their column names (a reference is ``<name>_id``), dates in
ISO 8601 (UTC), the row's primary key as ``id``: the stable id an import merges by. The
checksum comes last, after ``data``, so that an export can compute it while the rows stream: it
is the SHA-256 of every row's ``canonical`` line (kind and row, keys sorted, no spaces, UTF-8,
one line each, in the document's order). A kind may be left out (no rows).

Each row is checked against its kind's schema (backup/rows.py): every limit is the model's own
(``Task.TITLE_MAX``, the column's ``max_length``...), NUL is refused everywhere.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from dataclasses import dataclass, field
from typing import Annotated, Any

from django.conf import settings
from django.db import models
from pydantic import BaseModel, ConfigDict, Field

from agent.models import Conversation, Message
from approvals.models import ApprovalEvent, PendingAction
from automations.models import Automation, AutomationRun
from backup.rows import (
    ONE_LINE,
    ApprovalEventRow,
    AutomationRow,
    AutomationRunRow,
    ChangeRow,
    ConversationRow,
    MemoryRevisionRow,
    MemoryRow,
    MessageRow,
    NoteRow,
    NotificationRow,
    PendingActionRow,
    ProjectRow,
    Row,
    SettingsRow,
    TaskRow,
)
from memory.models import Memory, MemoryRevision
from talorys.lib.schemas import BoundedDatetime
from talorys.notifications.models import Notification
from talorys.workspace.models import Change, Note, OwnerSettings, Project, Task

FORMAT = "talorys-backup"
VERSION = 1


def app_version() -> str:
    """The version in pyproject.toml (the app is not installed as a package)."""
    try:
        with open(settings.BASE_DIR / "pyproject.toml", "rb") as file:
            return str(tomllib.load(file)["project"]["version"])
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        return "unknown"


def canonical(kind: str, row: dict[str, Any]) -> bytes:
    """One row's line in the checksum: the same bytes for the same data, however it was spaced."""
    return (
        json.dumps([kind, row], sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n"
    ).encode()


def new_checksum() -> Any:
    return hashlib.sha256()


def checksum_text(digest: Any) -> str:
    return f"sha256:{digest.hexdigest()}"


@dataclass(frozen=True)
class KindSpec:
    """One kind of row in the document: where it lives, what it holds, what it refers to."""

    name: str
    model: type[models.Model]
    schema: type[Row]
    # Column -> the kind it refers to (checked: in the file or in the database).
    refs: dict[str, str] = field(default_factory=dict)
    # How an import treats a row whose id is already here (importer.py): "merge" writes the
    # file's content; "history" never rewrites a row (the audit trail, the change log, runs and
    # messages are what happened here); "automation" keeps the owner's and may only pause it.
    policy: str = "merge"
    # Columns an import never installs (kept as they are here, or cleared on a new row).
    kept: tuple[str, ...] = ()

    @property
    def columns(self) -> list[str]:
        ignored = {"snapshot", "payload", "result", "undo_until", "decided_by_id"}
        if self.model is not PendingAction:
            ignored = set()
        return [name for name in self.schema.model_fields if name not in ignored]


KINDS: tuple[KindSpec, ...] = (
    KindSpec("projects", Project, ProjectRow),
    KindSpec("tasks", Task, TaskRow, refs={"project_id": "projects"}),
    KindSpec("notes", Note, NoteRow),
    KindSpec(
        "memories",
        Memory,
        MemoryRow,
        refs={"superseded_by_id": "memories", "conflicts_with_id": "memories"},
    ),
    KindSpec(
        "memory_revisions",
        MemoryRevision,
        MemoryRevisionRow,
        refs={"memory_id": "memories"},
        policy="history",
    ),
    KindSpec("notifications", Notification, NotificationRow),
    KindSpec("automations", Automation, AutomationRow, policy="automation"),
    KindSpec(
        "automation_runs",
        AutomationRun,
        AutomationRunRow,
        refs={"automation_id": "automations", "notification_id": "notifications"},
        policy="history",
    ),
    KindSpec(
        "conversations",
        Conversation,
        ConversationRow,
        kept=("summary", "summary_upto", "origin"),
    ),
    KindSpec(
        "messages",
        Message,
        MessageRow,
        refs={"conversation_id": "conversations"},
        policy="history",
    ),
    KindSpec("pending_actions", PendingAction, PendingActionRow, policy="history"),
    KindSpec(
        "approval_events",
        ApprovalEvent,
        ApprovalEventRow,
        refs={"action_id": "pending_actions"},
        policy="history",
    ),
    KindSpec("changes", Change, ChangeRow, refs={"reverts_id": "changes"}, policy="history"),
    # Where the model is reached stays as set here: a file must not send the owner's key or
    # conversations to a server it names. API keys are never exported at all.
    KindSpec(
        "settings",
        OwnerSettings,
        SettingsRow,
        kept=("model_base_url", "model_name", "embeddings_base_url", "embeddings_model"),
    ),
)
KIND_NAMES = tuple(kind.name for kind in KINDS)
BY_NAME = {kind.name: kind for kind in KINDS}


class Envelope(BaseModel):
    """What surrounds the data; the rows are checked kind by kind (importer.py)."""

    model_config = ConfigDict(extra="forbid")

    format: str
    version: int
    created_at: BoundedDatetime
    app_version: Annotated[str, Field(max_length=100), ONE_LINE] = ""
    data: dict[str, list[Any]]
    checksum: Annotated[str, Field(max_length=100), ONE_LINE]
