"""What the model reads of its tools stays exactly as it was: every tool's schema, and what each
list and search tool returns for one fixed set of the owner's data.

The model was prompted and evaluated against these texts, so a change to them is a change of
behaviour even when every other test passes. The pinned texts are in ``tool_specs.json`` and
``tool_outputs.json`` beside this file. When a tool's contract changes on purpose, run this
module with ``TALORYS_REWRITE_PINS=1`` and review the files' diff like code.
"""

from __future__ import annotations

import datetime as dt
import io
import json
import os
from pathlib import Path
from typing import Any

import pytest
import time_machine

from agent.executor import ToolExecutor
from automations.models import AutomationRun
from automations.services.crud import automation_create, automation_pause
from files import services as file_services
from memory import services as memory_services
from talorys.lib.tools import ToolContext, all_tools
from talorys.notifications import services as notification_services
from talorys.notifications.models import Notification
from talorys.owner.services.settings import owner_settings_update
from talorys.providers.base import ToolCall
from talorys.workspace import services
from talorys.workspace.tools import notes as note_tools
from talorys.workspace.tools import tasks as task_tools

HERE = Path(__file__).parent
SPECS = HERE / "tool_specs.json"
OUTPUTS = HERE / "tool_outputs.json"
REWRITE = os.environ.get("TALORYS_REWRITE_PINS") == "1"

NOW = dt.datetime(2026, 3, 2, 8, 58, tzinfo=dt.UTC)  # 09:58 in Paris
# A file's link names its id too.
ID_KEYS = {"id", "automation_id", "contradicts_memory", "file_id", "url"}

# (label, tool, arguments): each list and search tool, with and without its filters.
CALLS: list[tuple[str, str, dict[str, Any]]] = [
    ("list_projects", "list_projects", {}),
    ("list_tasks", "list_tasks", {}),
    ("list_tasks open, one", "list_tasks", {"status": "open", "limit": 1}),
    ("list_tasks of a project", "list_tasks", {"project_id": "<project>"}),
    ("list_tasks none", "list_tasks", {"status": "done"}),
    ("search_tasks", "search_tasks", {"query": "ferry"}),
    ("list_notes", "list_notes", {}),
    ("search_notes", "search_notes", {"query": "ferry"}),
    ("list_notifications", "list_notifications", {}),
    ("list_notifications unread", "list_notifications", {"unread_only": True}),
    ("list_memories", "list_memories", {}),
    ("list_memories query", "list_memories", {"query": "Porto"}),
    ("list_automations", "list_automations", {}),
    ("list_automations paused", "list_automations", {"enabled": False}),
    ("list_automation_runs", "list_automation_runs", {"automation_id": "<automation>"}),
    ("search", "search", {"query": "ferry"}),
    ("list_files", "list_files", {}),
    ("search_files", "search_files", {"query": "ferry"}),
]


def _pinned(value: Any) -> Any:
    """The result with row ids written as ``<id>``: sequences differ from run to run."""
    if isinstance(value, dict):
        return {k: "<id>" if k in ID_KEYS else _pinned(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_pinned(item) for item in value]
    return value


def _check(path: Path, found: dict[str, Any]) -> None:
    """Compare as JSON text, so the order of every key is pinned too."""
    text = json.dumps(found, ensure_ascii=False, indent=1) + "\n"
    if REWRITE:
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8"), f"{path.name} no longer matches"


def test_every_tool_schema_is_unchanged():
    specs = {tool.name: tool.spec() for tool in sorted(all_tools(), key=lambda t: t.name)}
    _check(SPECS, specs)


@pytest.fixture
def world(db):
    """One of everything a list tool shows, made at a fixed time in the owner's zone."""
    with time_machine.travel(NOW, tick=False):
        owner_settings_update(time_zone="Europe/Paris", semantic_enabled=False)
        home = services.project_create(name="Home", description="The flat  in\nLisbon")
        services.task_create(
            title="Book the ferry",
            details="Before Friday",
            priority=3,
            due_at=dt.datetime(2026, 3, 5, 8, 0, tzinfo=dt.UTC),
            project_id=home.pk,
        )
        services.task_create(title="Pay rent")
        # Long enough that a search's passage around the words is not the note's opening.
        travel = "Packing list: passport, charger, towel. " * 8 + "Book the ferry to Porto."
        services.note_create(title="Travel", content=travel)
        services.note_create(title="Shopping", content="Eggs, milk")
        upload = io.BytesIO(b"# Ferry\n\nThe ferry to Porto leaves at 9.\n\n# Rent\n\nPaid.")
        file = file_services.file_create(name="trip.md", stream=upload)
        file_services.file_extract(file_id=file.pk)
        memory_services.memory_create_unchecked(
            text="Sister Ana lives near Porto", category="person", valid_from=dt.date(2025, 9, 1)
        )
        memory_services.memory_create_unchecked(text="Prefers tea", category="preference")
        notification_services.notification_send(title="Ferry booked", body="Seat 12A")
        seen = notification_services.notification_send(title="Rent paid", body="x" * 400)
        Notification.objects.filter(pk=seen.pk).update(read_at=NOW)
        reminder = automation_create(
            name="Call Sam",
            kind="reminder",
            message="Call Sam",
            schedule={"type": "once", "at": "2026-03-03T09:00:00+01:00"},
        )
        paused = automation_create(
            name="Morning plan",
            kind="task_digest",
            message="",
            schedule={"type": "daily", "time": "08:00"},
        )
        automation_pause(automation_id=paused.pk)
        AutomationRun.objects.create(
            automation=reminder,
            slot=dt.datetime(2026, 3, 1, 8, 0, tzinfo=dt.UTC),
            status=AutomationRun.Status.OK,
            started_at=NOW,
            finished_at=NOW,
            result="Reminded the owner",
        )
        yield {"<project>": home.pk, "<automation>": reminder.pk}


def test_each_list_tool_returns_what_it_did(world):
    executor = ToolExecutor(ctx=ToolContext(mode="chat", source="chat"), max_tool_calls=50)
    found = {}
    with time_machine.travel(NOW, tick=False):
        for label, name, arguments in CALLS:
            arguments = {k: world.get(v, v) for k, v in arguments.items()}
            outcome = executor.execute(ToolCall(id=label, name=name, arguments=arguments))
            assert outcome.ok, (label, outcome.result)
            found[label] = _pinned(json.loads(outcome.content))
        # The workspace's own search tools, which recall's versions replace in the registry.
        ctx = ToolContext()
        query = {"query": "ferry"}
        tasks = task_tools.SearchTasks().run(task_tools.SearchTasksArgs(**query), ctx)
        notes = note_tools.SearchNotes().run(note_tools.SearchNotesArgs(**query), ctx)
        found["workspace search_tasks"] = _pinned(tasks)
        found["workspace search_notes"] = _pinned(notes)
    _check(OUTPUTS, found)
