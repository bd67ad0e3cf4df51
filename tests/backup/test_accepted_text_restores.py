"""The property that matters: whatever text the services accept, in every field the owner or the
model writes, the export imports back, unchanged (talorys/lib/validation.py, backup/rows.py)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent.models import Conversation
from agent.services import conversation_rename
from automations.models import Automation
from automations.services.crud import automation_create, automation_update
from backup.services import backup_import
from memory.models import Memory
from memory.services.memories import memory_create_unchecked
from talorys.lib.errors import AppError
from talorys.notifications.models import Notification
from talorys.notifications.services import notification_create
from talorys.workspace.models import Note, Project, Task
from talorys.workspace.services.notes import note_create, note_update
from talorys.workspace.services.projects import project_create
from talorys.workspace.services.tasks import task_create, task_update
from tests.backup.helpers import clear, exported
from tests.backup.test_round_trip import fenced

pytestmark = pytest.mark.django_db

# Every character but surrogates (not text: no UTF-8 encodes them), with the control characters
# (C0, DEL, C1, the Unicode line separators) drawn often, NUL among them.
CONTROLS = [chr(c) for c in [*range(0, 32), *range(0x7F, 0xA0), 0x2028, 0x2029]]
_any = st.characters(blacklist_categories=("Cs",))
_char = st.one_of(st.sampled_from(CONTROLS), st.sampled_from(" ab\u00e9"), _any)
_short = st.text(_char, max_size=30)


def text_for(limit: int) -> st.SearchStrategy[str]:
    """Short text, or text a few characters either side of ``limit`` (padded, its tail drawn)."""
    near = st.tuples(_short, st.integers(-3, 3)).map(
        lambda drawn: "x" * max(0, limit + drawn[1] - len(drawn[0])) + drawn[0]
    )
    return st.one_of(_short, _short, near)


def _conversation(title: str, body: str) -> Any:
    conversation = Conversation.objects.create(title="Chat")
    return conversation_rename(conversation_id=conversation.pk, title=title)


def _task(title: str, details: str) -> Any:
    task = task_create(title="Task", details=details)
    return task_update(task_id=task.pk, title=title)


def _note(title: str, content: str) -> Any:
    note = note_create(title=title)
    return note_update(note_id=note.pk, content=content)


def _automation(name: str, message: str) -> Any:
    made = automation_create(
        name="Daily", kind="reminder", schedule={"type": "daily", "time": "07:30"}
    )
    return automation_update(automation_id=made.pk, name=name, message=message)


# (service writing a one-line field and a long one, the one-line limit, the long one's limit)
WRITES: dict[str, tuple[Callable[[str, str], Any], int, int]] = {
    "task": (
        lambda one, long: task_create(title=one, details=long),
        Task.TITLE_MAX,
        Task.DETAILS_MAX,
    ),
    "task update": (_task, Task.TITLE_MAX, Task.DETAILS_MAX),
    "project": (
        lambda one, long: project_create(name=one, description=long),
        Project.NAME_MAX,
        Project.DESCRIPTION_MAX,
    ),
    "note": (lambda one, long: note_create(title=one, content=long), Note.TITLE_MAX, 0),
    "note update": (_note, Note.TITLE_MAX, Note.CONTENT_MAX),
    "memory": (lambda one, long: memory_create_unchecked(text=one + long), Memory.TEXT_MAX, 0),
    "automation": (
        lambda one, long: automation_create(
            name=one, kind="reminder", message=long, schedule={"type": "daily", "time": "08:00"}
        ),
        Automation.NAME_MAX,
        Automation.MESSAGE_MAX,
    ),
    "automation update": (_automation, Automation.NAME_MAX, Automation.MESSAGE_MAX),
    "notification": (
        lambda one, long: notification_create(title=one, body=long),
        Notification.TITLE_MAX,
        Notification.BODY_MAX,
    ),
    "conversation": (_conversation, Conversation.TITLE_MAX, 0),
}


@st.composite
def writes(draw: st.DrawFn) -> list[tuple[str, str, str]]:
    names = draw(st.lists(st.sampled_from(sorted(WRITES)), min_size=1, max_size=4))
    return [
        (
            name,
            draw(text_for(WRITES[name][1])),
            draw(text_for(WRITES[name][2]) if WRITES[name][2] else _short),
        )
        for name in names
    ]


def _one_line(value: str) -> bool:
    return not any(char in CONTROLS for char in value)


def _long_text(value: str) -> bool:
    return not any(char in CONTROLS and char not in "\n\r\t" for char in value)


ONE_LINE = [
    ("tasks", "title"),
    ("projects", "name"),
    ("notes", "title"),
    ("automations", "name"),
    ("notifications", "title"),
    ("conversations", "title"),
    ("changes", "title"),
]
LONG_TEXT = [
    ("tasks", "details"),
    ("projects", "description"),
    ("notes", "content"),
    ("memories", "text"),
    ("automations", "message"),
    ("notifications", "body"),
]


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(drawn=writes())
def test_whatever_the_services_accept_the_export_imports_back(drawn: list[tuple[str, str, str]]):
    clear()
    for name, one, long in drawn:
        with contextlib.suppress(AppError):  # refused: a clear error, and nothing written
            WRITES[name][0](one, long)
    before = exported()

    clear()
    backup_import(source=json.dumps(before).encode())

    assert exported()["data"] == fenced(before["data"])
    data = before["data"]
    assert all(_one_line(row[field]) for kind, field in ONE_LINE for row in data[kind])
    assert all(_long_text(row[field]) for kind, field in LONG_TEXT for row in data[kind])
