"""The backup document, version 1: its envelope, its kinds, and the schema each row must meet.

A backup is one JSON object::

    {"format": "talorys-backup", "version": 1, "created_at": "<ISO 8601, UTC>",
     "app_version": "0.1.0", "data": {"projects": [{...}, ...], "tasks": [...], ...},
     "checksum": "sha256:<hex>", "signature": "hmac-sha256:<hex>"}

``data`` maps each kind (``KINDS``, in that order: referenced kinds come first) to its rows. A
row is the table's columns under their column names (a reference is ``<name>_id``), dates in
ISO 8601 (UTC), the row's primary key as ``id``: the stable id an import merges by. The
checksum comes last, after ``data``, so that an export can compute it while the rows stream: it
is the SHA-256 of every row's ``canonical`` line (kind and row, keys sorted, no spaces, UTF-8,
one line each, in the document's order). A kind may be left out (no rows).

The checksum finds damage, not tampering: anyone can recompute it. The signature is an HMAC of
``created_at`` and the checksum with a key derived from this installation's SECRET_KEY
(``signature``), so an import can tell a file this installation exported, unchanged since, from
one made elsewhere (another installation, an edit, a forgery); both can be imported once the
owner has seen which it is. A file without a signature is one made elsewhere.

Each row is checked against its kind's schema (backup/rows.py): every limit is the model's own
(``Task.TITLE_MAX``, the column's ``max_length``...), NUL is refused everywhere. Every earlier
shape of the file still imports: a field added since has a default in its row schema, and the
files in tests/backup/formats/ are imported by tests/backup/test_earlier_formats.py.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Annotated, Any

from django.conf import settings
from django.db import models
from django.utils.crypto import constant_time_compare, salted_hmac
from pydantic import BaseModel, ConfigDict, Field

from agent.models import Conversation, Message
from approvals.models import ApprovalEvent, PendingAction
from automations.models import Automation, AutomationRun
from backup.contents import CONTENT_BATCH_ROWS, ContentMerger, content_rows
from backup.rows import (
    ONE_LINE,
    ApprovalEventRow,
    AutomationRow,
    AutomationRunRow,
    ChangeRow,
    ConversationRow,
    FileContentRow,
    FilePassageRow,
    FileRow,
    MemoryRevisionRow,
    MemoryRow,
    MessageAttachmentRow,
    MessageRow,
    NoteRow,
    NotificationRow,
    PendingActionRow,
    ProjectRow,
    Row,
    SettingsRow,
    TaskRow,
)
from files.models import File, FilePassage
from memory.models import Memory, MemoryRevision
from talorys.history.models import Change
from talorys.notifications.models import Notification
from talorys.owner.models import OwnerSettings
from talorys.web.schemas import BoundedDatetime
from talorys.workspace.models import Note, Project, Task

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


SIGNATURE_SALT = "talorys.backup.signature"


def signature(created_at: str, checksum: str, *, secret: str | None = None) -> str:
    """This installation's signature of a document: its ``created_at`` and checksum, as written."""
    mac = salted_hmac(SIGNATURE_SALT, f"{created_at}\n{checksum}", secret, algorithm="sha256")
    return f"hmac-sha256:{mac.hexdigest()}"


def signed_here(created_at: str, checksum: str, given: str) -> bool:
    """Whether ``given`` is this installation's signature (SECRET_KEY, or a key it replaced)."""
    keys = [settings.SECRET_KEY, *getattr(settings, "SECRET_KEY_FALLBACKS", [])]
    return bool(given) and any(
        constant_time_compare(signature(created_at, checksum, secret=key), given) for key in keys
    )


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
    # Its kind in the change log and the bin (talorys/history/kinds.py), when it has one:
    # an import's change to a row already here is recorded there, and can be reverted.
    item: str = ""
    # A kind whose rows are not a table's (the files' bytes, backup/contents.py): ``export``
    # writes them and ``merger(dry_run)`` merges them, a batch of ``batch_rows`` at a time.
    export: Callable[[], Iterator[dict[str, Any]]] | None = None
    merger: Callable[[bool], Any] | None = None
    batch_rows: int | None = None  # None: the importer's BATCH_ROWS

    @property
    def columns(self) -> list[str]:
        ignored = {"snapshot", "payload", "result", "undo_until", "decided_by_id"}
        if self.model is not PendingAction:
            ignored = set()
        return [name for name in self.schema.model_fields if name not in ignored]


KINDS: tuple[KindSpec, ...] = (
    KindSpec("projects", Project, ProjectRow, item="project"),
    KindSpec("tasks", Task, TaskRow, refs={"project_id": "projects"}, item="task"),
    KindSpec("notes", Note, NoteRow, item="note"),
    KindSpec("files", File, FileRow, item="file"),
    # A file's passages are what its text was read into here: never rewritten by an import.
    KindSpec(
        "file_passages", FilePassage, FilePassageRow, refs={"file_id": "files"}, policy="history"
    ),
    KindSpec(
        "file_contents",
        File,
        FileContentRow,
        export=content_rows,
        merger=ContentMerger,
        batch_rows=CONTENT_BATCH_ROWS,
    ),
    KindSpec(
        "memories",
        Memory,
        MemoryRow,
        refs={"superseded_by_id": "memories", "conflicts_with_id": "memories"},
        item="memory",
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
        refs={
            "automation_id": "automations",
            "notification_id": "notifications",
            "conversation_id": "conversations",
        },
        policy="history",
    ),
    KindSpec(
        "conversations",
        Conversation,
        ConversationRow,
        # The model, as the settings' model_name: another install's server may not list it.
        kept=("summary", "summary_upto", "origin", "model"),
        item="conversation",
    ),
    KindSpec(
        "messages",
        Message,
        MessageRow,
        refs={"conversation_id": "conversations", "parent_id": "messages"},
        policy="history",
    ),
    # The files attached to the owner's messages: history, like the messages themselves.
    KindSpec(
        "message_attachments",
        Message.attachments.through,
        MessageAttachmentRow,
        refs={"message_id": "messages", "file_id": "files"},
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
    # conversations to a server it names. API keys and the calendar feed's secret (a capability:
    # whoever holds it reads the feed) are never exported at all: SettingsRow has no field for them.
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
    """What surrounds the data (read by backup/reader.py; the rows are checked one by one)."""

    model_config = ConfigDict(extra="forbid")

    format: str
    version: int
    created_at: BoundedDatetime
    app_version: Annotated[str, Field(max_length=100), ONE_LINE] = ""
    checksum: Annotated[str, Field(max_length=100), ONE_LINE]
    signature: Annotated[str, Field(max_length=100), ONE_LINE] = ""
