"""Control characters never make a backup unrestorable (talorys/lib/validation.py): every entry
point stores a one-line field on one line, so its export imports back; an older export that
holds them in such a field imports with the field made one line the same way, not refused."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client

from agent.executor import ToolExecutor
from agent.models import Conversation
from automations.models import Automation
from backup.services import backup_import
from config.mcp.access import caller_for, tool_call
from talorys.accounts.services import api_token_create
from talorys.history.models import Change
from talorys.lib.tools import ToolContext
from talorys.notifications.models import Notification
from talorys.providers.base import ToolCall
from talorys.workspace.models import Note, Project, Task
from tests.backup.helpers import clear, document, exported, raw, seed

pytestmark = pytest.mark.django_db

DAILY = {"type": "daily", "time": "07:30"}


def _created(response: Any) -> int:
    assert response.status_code == 201, response.content
    return int(response.json()["id"])


def _through_the_api(api: Any) -> None:
    """A title or name with CR, LF, TAB and ESC through each of the API's writes."""
    _created(api.post("/api/projects", {"name": "Garden\r\nplan"}))
    task = _created(api.post("/api/tasks", {"title": "Buy\x1b[31m milk\tnow"}))
    binned = _created(api.post("/api/tasks", {"title": "Old\r\n\r\nerrand\x07"}))
    assert api.delete(f"/api/tasks/{binned}").status_code in (200, 204)
    assert api.patch(f"/api/tasks/{task}", {"title": "Buy\x1b[31m oat\nmilk"}).status_code == 200
    _created(api.post("/api/notes", {"title": "Line\none", "content": "a\r\nb\x1b\tc"}))
    body = {"name": "Morning\x1b\t", "kind": "reminder", "schedule": DAILY}
    _created(api.post("/api/automations", body))
    conversation = Conversation.objects.create(title="Chat")
    renamed = api.patch(f"/api/conversations/{conversation.pk}", {"title": "Tab\tand\x1bESC"})
    assert renamed.status_code == 200, renamed.content


def _through_the_tools(owner: Any) -> None:
    """The chat model's create_task, and MCP's, with a newline and ESC in the title."""
    chat = ToolExecutor(ctx=ToolContext(mode="chat", source="chat"), max_tool_calls=5)
    call = ToolCall(id="call-1", name="create_task", arguments={"title": "Call\nmom\x1b"})
    assert chat.execute(call).ok
    _token, secret = api_token_create(user=owner, name="mcp\tclient", scope="write")
    caller = caller_for(secret)
    assert caller is not None
    assert tool_call(caller, "create_task", {"title": "MCP\r\n\x1bstamps"})["ok"]


def _through_a_page(client: Client, token: str) -> None:
    response = client.post("/tasks/", {"title": "Page\r\ntitle\x1b", "csrfmiddlewaretoken": token})
    assert response.status_code == 303, response.content


def test_control_characters_from_every_entry_point_are_one_line_and_the_backup_restores(api, owner):
    _through_the_api(api)
    _through_the_tools(owner)
    _through_a_page(api.client, api.csrf_token)
    backup = exported()

    clear()
    backup_import(source=json.dumps(backup).encode())

    assert sorted(Task.objects.values_list("title", flat=True)) == [
        "Buy[31m oat milk",
        "Call mom",
        "MCP stamps",
        "Old errand",
        "Page title",
    ]
    assert list(Project.objects.values_list("name", flat=True)) == ["Garden plan"]
    assert list(Note.objects.values_list("title", "content")) == [("Line one", "a\r\nb\tc")]
    assert list(Automation.objects.values_list("name", flat=True)) == ["Morning"]
    assert list(Conversation.objects.values_list("title", flat=True)) == ["Tab andESC"]
    assert exported()["data"]["tasks"] == backup["data"]["tasks"]


def test_a_title_written_before_the_rule_is_one_line_in_the_change_log_and_approvals():
    """What the services derive from long text (a memory's title is the start of its text;
    a proposal's summary may quote it) is one line too."""
    seed()
    task = Task.objects.create(title="Title\x1bwritten\r\nbefore")
    chat = ToolExecutor(ctx=ToolContext(mode="chat", source="chat"), max_tool_calls=5)
    call = ToolCall(id="call-2", name="remember", arguments={"text": "Line one\nline two"})
    assert chat.execute(call).ok
    delete = ToolCall(id="call-3", name="delete_task", arguments={"task_id": task.pk})
    assert chat.execute(delete).ok
    backup = exported()

    clear()
    backup_import(source=json.dumps(backup).encode())

    titles = set(Change.objects.values_list("title", flat=True))
    assert "Line one line two" in titles
    assert all("\n" not in title and "\x1b" not in title for title in titles)


def _older_export() -> dict[str, list[dict[str, Any]]]:
    """The seeded data as an export written before the rule holds it: control characters in
    one-line fields of several kinds, one of them on an item in the bin."""
    data = exported()["data"]
    data["projects"][0]["name"] = "Garden\r\nbeds"
    binned = next(row for row in data["notes"] if row["deleted_at"])
    binned["title"] = "Old\tplan\x1b"
    data["tasks"][0]["title"] = "bell\x07 and\nbreak"
    data["notifications"][0]["title"] = "Remind\x1b[0m"
    data["conversations"][0]["title"] = "Week\u2028end"
    data["changes"][0]["title"] = "Water\r\nthe beds"
    data["pending_actions"][0]["summary"] = "Delete\nnote"
    return data


def test_an_older_export_with_control_characters_imports_with_those_fields_made_one_line():
    seed()
    old = _older_export()
    clear()

    report = backup_import(source=raw(document(old)))

    assert report["kinds"]["tasks"]["added"] == len(old["tasks"])
    assert list(Project.objects.values_list("name", flat=True)) == ["Garden beds"]
    assert Note.objects.filter(title="Old plan").exists()
    assert Task.objects.filter(title="bell and break").exists()
    assert Notification.objects.filter(title="Remind[0m").exists()
    assert Conversation.objects.filter(title="Week end").exists()
    assert Change.objects.filter(title="Water the beds").exists()
    assert exported()["data"]["tasks"][0]["title"] == "bell and break"
