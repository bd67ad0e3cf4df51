"""What the backup tests share: a dataset of every kind, a document to tamper with, and a
fingerprint of the whole database to prove that a refused import changed nothing."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from typing import Any

from django.apps import apps
from django.utils import timezone

from agent.models import Conversation, Message
from approvals.models import ApprovalEvent, PendingAction
from automations.models import Automation, AutomationRun
from backup.format import FORMAT, KINDS, VERSION, canonical, checksum_text, new_checksum
from backup.services import backup_export
from memory.models import Memory, MemoryRevision
from talorys.history.models import Change
from talorys.notifications.models import Notification
from talorys.owner.models import OwnerSettings
from talorys.workspace.models import Note, Project, Task

NOW = dt.datetime(2026, 11, 30, 9, 30, tzinfo=dt.UTC)


def exported() -> dict[str, Any]:
    return json.loads(b"".join(backup_export()))


def document(data: dict[str, list[dict[str, Any]]], **envelope: Any) -> dict[str, Any]:
    """A backup of ``data`` with a checksum that matches it."""
    digest = new_checksum()
    for kind, rows in data.items():
        for row in rows:
            digest.update(canonical(kind, row))
    return {
        "format": FORMAT,
        "version": VERSION,
        "created_at": NOW.isoformat(),
        "app_version": "test",
        "data": data,
        "checksum": checksum_text(digest),
    } | envelope


def raw(doc: dict[str, Any]) -> bytes:
    return json.dumps(doc).encode()


def fingerprint() -> dict[str, tuple[int, str]]:
    """Every table's row count and a hash of its content, in id order. Sessions are left out:
    a page's request writes its own session (the flash message), which is not the owner's data."""
    tables: dict[str, tuple[int, str]] = {}
    for model in apps.get_models():
        if model._meta.db_table == "django_session":
            continue
        rows = list(model._base_manager.order_by("pk").values_list())
        digest = hashlib.sha256(repr(rows).encode()).hexdigest()
        tables[model._meta.db_table] = (len(rows), digest)
    return tables


def clear() -> None:
    """Every row a backup holds, gone (children first)."""
    for kind in reversed(KINDS):
        kind.model._base_manager.all().delete()


def seed() -> dict[str, Any]:
    """One row or more of every kind, with references between them."""
    project = Project.objects.create(name="Garden", description="Beds and paths")
    task = Task.objects.create(
        title="Water the beds",
        project=project,
        due_at=NOW,
        repeat={"type": "weekly", "days": ["mon", "thu"], "time": "08:00"},
    )
    done = Task.objects.create(title="Buy seeds", status="done", completed_at=NOW)
    binned = Note.objects.create(title="Old plan", content="# Plan\n\n- dig", deleted_at=NOW)
    note = Note.objects.create(title="Plan", content="Tomatoes **first**")
    memory = Memory.objects.create(text="Owner lives in Berlin", category="place")
    newer = Memory.objects.create(text="Owner lives in Lisbon", category="place")
    Memory.objects.filter(pk=memory.pk).update(superseded_by=newer, superseded_at=NOW)
    MemoryRevision.objects.create(
        memory=memory,
        action="create",
        text=memory.text,
        category="place",
        source="owner",
        actor="chat",
        conversation_id=1,
        message_id=2,
    )
    notification = Notification.objects.create(title="Reminder", body="Water", kind="reminder")
    automation = Automation.objects.create(
        name="Morning",
        kind="reminder",
        message="Look at today",
        schedule={"type": "daily", "time": "07:30"},
        next_run_at=NOW,
        armed_time_zone="UTC",
    )
    AutomationRun.objects.create(
        automation=automation,
        slot=NOW,
        status="ok",
        started_at=NOW,
        finished_at=NOW,
        result="Sent",
        usage={"requests": 1},
        notification=notification,
    )
    conversation = Conversation.objects.create(title="Weekend", summary="They talked of seeds")
    AutomationRun.objects.create(  # a scheduled prompt's answer, kept as a conversation
        automation=automation,
        slot=NOW - dt.timedelta(days=1),
        status="ok",
        started_at=NOW - dt.timedelta(days=1),
        finished_at=NOW - dt.timedelta(days=1),
        result="Nothing due",
        conversation=conversation,
    )
    ask = Message.objects.create(conversation=conversation, role="user", content="Delete it")
    reply = Message.objects.create(
        conversation=conversation,
        parent=ask,
        role="assistant",
        content="Waiting for you",
        tool_activity=[{"tool": "delete_note", "status": "awaiting_approval", "action_id": 1}],
    )
    action = PendingAction.objects.create(
        tool="delete_note",
        target_id=note.pk,
        snapshot="abc",
        payload={"note_id": note.pk},
        summary="Delete note Plan",
        status="pending",
        expires_at=NOW + dt.timedelta(days=9999),
        conversation_id=conversation.pk,
        message_id=reply.pk,
    )
    ApprovalEvent.objects.create(
        action=action,
        action_ref=action.pk,
        tool="delete_note",
        target_id=note.pk,
        summary="Delete note Plan",
        kind="proposed",
        actor="model",
    )
    first = Change.objects.create(
        kind="task",
        object_id=task.pk,
        action="update",
        title=task.title,
        source="chat",
        before={"title": "Water"},
        after={"title": task.title},
        conversation_id=conversation.pk,
        message_id=reply.pk,
    )
    Change.objects.create(
        kind="task",
        object_id=task.pk,
        action="update",
        title=task.title,
        source="owner",
        before={"title": task.title},
        after={"title": "Water"},
        reverts=first,
    )
    OwnerSettings.objects.update_or_create(
        pk=1,
        defaults={
            "time_zone": "Europe/Berlin",
            "model_base_url": "https://models.example/v1",
            "model_name": "m",
            "model_api_key": "sk-secret-key",
            "embeddings_api_key": "ek-secret",
            "quiet_hours_start": dt.time(22),
            "quiet_hours_end": dt.time(7),
        },
    )
    return {
        "task": task,
        "done": done,
        "binned": binned,
        "note": note,
        "memory": memory,
        "automation": automation,
        "conversation": conversation,
        "ask": ask,
        "reply": reply,
        "action": action,
    }


def now() -> dt.datetime:
    return timezone.now()
