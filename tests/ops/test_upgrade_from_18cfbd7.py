"""An install made at 18cfbd7 (before the nested apps) upgrades in place, with every row intact.

The old tree (``git archive 18cfbd7``) migrates a SQLite database and fills it through its own
models; then this tree's ``manage.py migrate`` runs on the same data directory: the migrations
added since (token scopes, the change log, ...) and the move of the core models to
talorys.accounts, talorys.workspace and talorys.notifications, which keeps their tables. Every
row of every old table must still be there, the admin's content types must follow the moved
models, and this tree's ORM must read the old rows.

Each step runs in a subprocess, as an operator would run it: the two trees cannot share one
interpreter (both are the ``talorys`` package).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
OLD_COMMIT = "18cfbd7"
# The core models' tables, and the app that owns each of them now.
MOVED = {
    "talorys_apitoken": "accounts",
    "talorys_project": "workspace",
    "talorys_task": "workspace",
    "talorys_note": "workspace",
    "talorys_ownersettings": "owner",
    "talorys_usageday": "owner",
    "talorys_notification": "notifications",
    "talorys_pushsubscription": "notifications",
    "talorys_pushdelivery": "notifications",
}

# Run by the old tree's `manage.py shell`: one row (or more) of every kind the owner keeps.
OLD_DATA = """
import json
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.auth import get_user_model
from django.contrib.contenttypes.models import ContentType
from django.utils import timezone
from agent.models import Conversation, Message
from approvals.models import ApprovalEvent, PendingAction
from automations.models import Automation, AutomationRun
from memory.models import Memory, MemoryRevision
from talorys.models import (
    Note, Notification, OwnerSettings, Project, PushDelivery, PushSubscription, Task, UsageDay,
)
from talorys.security import api_token_create

now = timezone.now()
owner = get_user_model().objects.create_superuser("owner", password="an old password 1")
token, raw = api_token_create(user=owner, name="backup script")
project = Project.objects.create(name="House", description="Repairs")
task = Task.objects.create(title="Fix the roof", details="Before winter", project=project, due_at=now)
Task.objects.create(title="Buy tiles", status="done", completed_at=now, priority=3)
Note.objects.create(title="Roofers", content="Ask three for a quote")
OwnerSettings.objects.create(pk=1, time_zone="Europe/Paris", daily_ai_requests=77)
UsageDay.objects.create(day=now.date(), ai_requests=3, output_tokens=1234)
memory = Memory.objects.create(text="The roof is slate", category="fact", source="chat")
MemoryRevision.objects.create(
    memory=memory, action="create", text=memory.text, category="fact", source="chat"
)
automation = Automation.objects.create(
    name="Roof reminder", kind="reminder", message="Call the roofer",
    schedule={"type": "daily", "time": "09:00"}, next_run_at=now,
)
notification = Notification.objects.create(
    title="Call the roofer", kind="reminder", source=f"automation:{automation.pk}"
)
AutomationRun.objects.create(
    automation=automation, slot=now, started_at=now, finished_at=now, status="ok",
    result="Call the roofer", notification=notification,
)
subscription = PushSubscription.objects.create(
    endpoint="https://push.example/abc", p256dh="key", auth="secret"
)
PushDelivery.objects.create(
    notification=notification, subscription=subscription, not_before=now, status="sent"
)
conversation = Conversation.objects.create(title="The roof")
Message.objects.create(conversation=conversation, role="user", content="Remind me at nine")
Message.objects.create(conversation=conversation, role="assistant", content="Done.")
action = PendingAction.objects.create(
    tool="delete_task", target_id=task.pk, snapshot="0" * 64, summary="Delete the task",
    expires_at=now, conversation_id=conversation.pk,
)
ApprovalEvent.objects.create(
    action=action, action_ref=action.pk, tool="delete_task", target_id=task.pk,
    summary="Delete the task", kind="proposed", actor="model",
)
LogEntry.objects.create(
    user=owner, content_type=ContentType.objects.get_for_model(Task), object_id=str(task.pk),
    object_repr=str(task), action_flag=CHANGE, change_message="Changed the title.",
)
print(json.dumps({"token": raw, "task": task.pk, "notification": notification.pk}))
"""

# Run by this tree's `manage.py shell` after the upgrade: the ORM reads the old rows.
NEW_READ = """
import json
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import Permission
from agent.models import Message
from automations.models import AutomationRun
from memory.models import Memory
from talorys.accounts.services import api_token_authenticate
from talorys.notifications.models import PushDelivery
from talorys.workspace.models import Task
from talorys.owner.models import OwnerSettings

token = api_token_authenticate(raw=TOKEN)
run = AutomationRun.objects.get()
entry = LogEntry.objects.get()
print(json.dumps({
    "token_user": token.user.username if token else None,
    "token_scope": token.scope if token else None,
    "task": Task.objects.get(pk=TASK).title,
    "task_project": Task.objects.get(pk=TASK).project.name,
    "time_zone": OwnerSettings.objects.get().time_zone,
    "memory_revisions": Memory.objects.get().revisions.count(),
    "run_notification": run.notification.title,
    "delivery": PushDelivery.objects.select_related("notification", "subscription").get().subscription.endpoint,
    "messages": list(Message.objects.order_by("id").values_list("content", flat=True)),
    "message_parents": list(Message.objects.order_by("id").values_list("parent__content", flat=True)),
    "log_entry_object": str(entry.get_edited_object()),
    "log_entry_url": entry.get_admin_url(),
    "task_permissions": sorted(
        Permission.objects.filter(content_type__model="task").values_list(
            "content_type__app_label", "codename"
        )
    ),
}))
"""


def _git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, check=False)


def _old_tree(into: Path) -> Path:
    if shutil.which("git") is None:
        pytest.fail("git is needed to build the old tree (the upgrade test reads the history)")
    if _git("cat-file", "-e", f"{OLD_COMMIT}^{{commit}}").returncode != 0:
        pytest.fail(f"commit {OLD_COMMIT} is not in this clone: clone with the full history")
    archive = _git("archive", "--format=tar", OLD_COMMIT)
    assert archive.returncode == 0, archive.stderr.decode()
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(into, filter="data")
    return into


def _manage(tree: Path, data_dir: Path, *args: str) -> str:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"DATABASE_URL", "REDIS_URL", "PYTHONPATH", "DJANGO_SETTINGS_MODULE"}
        and not key.startswith("TALORYS_")
    }
    env.update(TALORYS_DATA_DIR=str(data_dir))  # each tree's manage.py names its settings
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, f"manage.py {args[0]} in {tree}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _tables(db: Path) -> dict[str, tuple[list[str], list[tuple]]]:
    """Every table: its columns and its rows (sorted), read with plain SQL."""
    with sqlite3.connect(db) as conn:
        names = [
            row[0]
            for row in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        ]
        out = {}
        for name in names:
            cursor = conn.execute(f'SELECT * FROM "{name}"')
            columns = [d[0] for d in cursor.description]
            out[name] = (columns, sorted(cursor.fetchall(), key=repr))
    return out


def _project(table: tuple[list[str], list[tuple]], columns: list[str]) -> list[tuple]:
    have, rows = table
    index = [have.index(c) for c in columns]
    return sorted((tuple(row[i] for i in index) for row in rows), key=repr)


def _without(row: tuple, index: int) -> tuple:
    return row[:index] + row[index + 1 :]


@pytest.mark.subprocess
def test_an_install_from_18cfbd7_upgrades_with_every_row_intact(tmp_path):
    old = _old_tree(tmp_path / "old")
    data = tmp_path / "data"
    data.mkdir()

    _manage(old, data, "migrate", "--no-input", "-v", "0")
    made = json.loads(_manage(old, data, "shell", "-c", OLD_DATA).strip().splitlines()[-1])
    db = data / "talorys.sqlite3"
    before = _tables(db)
    assert {len(before[t][1]) for t in MOVED} >= {1}, "the old tree made a row of every kind"

    _manage(ROOT, data, "migrate", "--no-input", "-v", "0")
    after = _tables(db)

    # Every old table is still there, each old row with every old column unchanged...
    for name, (columns, rows) in before.items():
        if name in {"django_migrations", "django_content_type"}:
            continue
        assert name in after, f"table {name} is gone"
        kept = _project(after[name], columns)
        if name == "talorys_ownersettings":
            # The one change a migration makes on purpose: semantic recall on, no server set
            # (workspace 0006); every other column as it was.
            on = columns.index("semantic_enabled")
            assert [r[on] for r in kept] == [1] * len(rows) and [r[on] for r in rows] == [0]
            assert [_without(r, on) for r in kept] == [_without(r, on) for r in rows]
        elif name.startswith(("talorys_", "agent_", "memory_", "automations_", "approvals_")):
            assert kept == rows, f"rows of {name} changed"
        else:  # Django's own tables may gain rows (permissions of the new models)
            assert set(rows) <= set(kept), f"rows of {name} lost"
    # ...the migrations history only grew...
    assert set(before["django_migrations"][1]) <= set(after["django_migrations"][1])
    # ...and the moved models' content types kept their ids under their new apps.
    old_types = {
        row[0]: row[1:]
        for row in _project(before["django_content_type"], ["id", "app_label", "model"])
    }
    new_types = {
        row[0]: row[1:]
        for row in _project(after["django_content_type"], ["id", "app_label", "model"])
    }
    for type_id, (label, model) in old_types.items():
        moved_to = MOVED.get(f"talorys_{model}") if label == "talorys" else None
        assert new_types[type_id] == ((moved_to, model) if moved_to else (label, model))

    # This tree's ORM reads what the old one wrote.
    read = NEW_READ.replace("TOKEN", repr(made["token"])).replace("TASK", str(made["task"]))
    seen = json.loads(_manage(ROOT, data, "shell", "-c", read).strip().splitlines()[-1])
    assert seen == {
        "token_user": "owner",
        "token_scope": "read",  # 0003 gave tokens made before scopes the read scope
        "task": "Fix the roof",
        "task_project": "House",
        "time_zone": "Europe/Paris",
        "memory_revisions": 1,
        "run_notification": "Call the roofer",
        "delivery": "https://push.example/abc",
        "messages": ["Remind me at nine", "Done."],
        # Linked into one chain by agent/migrations/0007 (branches): the reply follows the message.
        "message_parents": [None, "Remind me at nine"],
        "log_entry_object": "Fix the roof",
        "log_entry_url": f"/admin/workspace/task/{made['task']}/change/",
        "task_permissions": [
            ["workspace", "add_task"],
            ["workspace", "change_task"],
            ["workspace", "delete_task"],
            ["workspace", "view_task"],
        ],
    }
