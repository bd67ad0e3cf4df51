"""The core tools do what their descriptions promise, against the database, called the way the
model calls them (through a turn's executor)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
import time_machine
from django.utils import timezone

from agent.executor import ToolExecutor, ToolOutcome
from talorys.lib.tools import ToolContext
from talorys.notifications import services as notification_services
from talorys.notifications.models import Notification
from talorys.owner.services.settings import owner_settings_update
from talorys.providers.base import ToolCall
from talorys.workspace import services
from talorys.workspace.models import Note, Project, Task

pytestmark = pytest.mark.django_db

PARIS = dt.timezone(dt.timedelta(hours=1))


def call(tool: str, /, **arguments: Any) -> ToolOutcome:
    executor = ToolExecutor(ctx=ToolContext(mode="chat", source="chat"), max_tool_calls=12)
    return executor.execute(ToolCall(id="call-1", name=tool, arguments=arguments))


def error_code(outcome: ToolOutcome) -> str:
    assert not outcome.ok, outcome.result
    return outcome.result["error"]["code"]


@pytest.fixture
def paris_owner():
    owner_settings_update(time_zone="Europe/Paris")


# --- tasks -------------------------------------------------------------------------------------


def test_create_task_stores_every_field_and_shows_due_in_owner_time(paris_owner):
    project = services.project_create(name="Home")

    outcome = call(
        "create_task",
        title="Pay rent",
        details="Transfer to the landlord",
        priority=3,
        due_at="2026-03-01T09:00:00+01:00",
        project_id=project.pk,
    )

    assert outcome.ok, outcome.result
    task = Task.objects.get()
    assert (task.title, task.details, task.priority, task.project) == (
        "Pay rent",
        "Transfer to the landlord",
        3,
        project,
    )
    assert task.due_at == dt.datetime(2026, 3, 1, 8, 0, tzinfo=dt.UTC)
    assert outcome.result["task"] == {
        "id": task.pk,
        "title": "Pay rent",
        "status": "open",
        "priority": 3,
        "due_at": "2026-03-01T09:00+01:00",
        "project": {"id": project.pk, "name": "Home"},
        "repeat": None,
        "version": 1,
    }


def test_the_model_makes_a_repeating_task_and_completing_it_rolls_it_forward(paris_owner):
    weekly = {"type": "weekly", "days": ["mon"], "time": "08:00"}
    made = call(
        "create_task", title="Water plants", due_at="2026-12-07T08:00:00+01:00", repeat=weekly
    )
    assert made.ok, made.result
    assert made.result["task"]["repeat"] == weekly
    with time_machine.travel(dt.datetime(2026, 12, 7, 9, tzinfo=dt.UTC), tick=False):
        done = call("complete_task", task_id=made.result["task"]["id"])
    assert done.result["task"]["status"] == "open"
    assert done.result["task"]["due_at"] == "2026-12-14T08:00+01:00"
    stopped = call("update_task", task_id=made.result["task"]["id"], repeat=None)
    assert stopped.result["task"]["repeat"] is None
    once = call("create_task", title="Bins", repeat={"type": "once", "at": "2026-12-07T08:00:00Z"})
    assert error_code(once) == "INVALID_ARGUMENTS"
    assert Task.objects.count() == 1


@pytest.mark.parametrize(
    "arguments",
    [
        {"title": "Pay rent", "due_at": "2026-03-01T09:00:00"},  # no offset
        {"title": ""},
        {"title": "Pay rent", "priority": 5},
        {"title": "Pay rent", "colour": "red"},  # unknown field
        {"details": "no title"},
    ],
)
def test_create_task_with_bad_arguments_creates_nothing(arguments):
    outcome = call("create_task", **arguments)

    assert error_code(outcome) == "INVALID_ARGUMENTS"
    assert not Task.objects.exists()


def test_create_task_in_a_missing_project_creates_nothing():
    outcome = call("create_task", title="Pay rent", project_id=999)

    assert error_code(outcome) in {"NOT_FOUND", "VALIDATION"}
    assert "999" in outcome.result["error"]["message"]
    assert not Task.objects.exists()


def test_list_tasks_filters_by_status_project_and_due_window():
    home = services.project_create(name="Home")
    soon = services.task_create(
        title="Soon", project_id=home.pk, due_at=dt.datetime(2026, 3, 1, 9, tzinfo=dt.UTC)
    )
    services.task_create(title="Later", due_at=dt.datetime(2026, 6, 1, 9, tzinfo=dt.UTC))
    done = services.task_create(title="Done one", project_id=home.pk)
    services.task_complete(task_id=done.pk)

    open_titles = [t["title"] for t in call("list_tasks", status="open").result["tasks"]]
    assert open_titles == ["Soon", "Later"]

    by_project = call("list_tasks", project_id=home.pk).result
    assert {t["title"] for t in by_project["tasks"]} == {"Soon", "Done one"}

    due = call("list_tasks", due_before="2026-04-01T00:00:00+00:00").result
    assert [t["id"] for t in due["tasks"]] == [soon.pk]


def test_list_tasks_limit_keeps_the_total():
    for n in range(5):
        services.task_create(title=f"Task {n}")

    outcome = call("list_tasks", limit=2)

    assert len(outcome.result["tasks"]) == 2
    assert outcome.result["total"] == 5
    assert error_code(call("list_tasks", limit=51)) == "INVALID_ARGUMENTS"


def test_list_tasks_of_a_missing_project_says_so():
    assert error_code(call("list_tasks", project_id=999)) == "NOT_FOUND"


def test_search_tasks_matches_title_and_details():
    services.task_create(title="Call the plumber", details="about the kitchen sink")
    services.task_create(title="Buy milk")

    hits = call("search_tasks", query="SINK").result["tasks"]

    # The details' word ranks it first; by meaning alone another task may follow.
    assert hits[0]["title"] == "Call the plumber"


def test_update_task_changes_only_the_fields_sent():
    project = services.project_create(name="Home")
    task = services.task_create(
        title="Pay rent",
        details="keep me",
        priority=1,
        project_id=project.pk,
        due_at=dt.datetime(2026, 3, 1, 9, tzinfo=dt.UTC),
    )

    outcome = call("update_task", task_id=task.pk, title="Pay the rent", due_at=None)

    assert outcome.ok, outcome.result
    task.refresh_from_db()
    assert task.title == "Pay the rent"
    assert task.due_at is None
    assert (task.details, task.priority, task.project_id) == ("keep me", 1, project.pk)


def test_update_task_status_done_records_completion():
    task = services.task_create(title="Pay rent")

    call("update_task", task_id=task.pk, status="done")

    task.refresh_from_db()
    assert task.status == "done"
    assert task.completed_at is not None


def test_update_task_with_a_bad_id_or_nothing_to_change_changes_nothing():
    task = services.task_create(title="Pay rent")
    before = Task.objects.values().get()

    assert error_code(call("update_task", task_id=999, title="Other")) == "NOT_FOUND"
    assert error_code(call("update_task", task_id=task.pk)) == "NOTHING_TO_CHANGE"
    assert error_code(call("update_task", task_id=task.pk, status="finished")) == (
        "INVALID_ARGUMENTS"
    )
    assert error_code(call("update_task", task_id=task.pk, project_id=999)) in {
        "NOT_FOUND",
        "VALIDATION",
    }
    assert Task.objects.values().get() == before


def test_complete_task_marks_it_done_once():
    task = services.task_create(title="Pay rent")

    first = call("complete_task", task_id=task.pk)
    task.refresh_from_db()
    completed_at = task.completed_at
    second = call("complete_task", task_id=task.pk)

    assert first.result["task"]["status"] == "done"
    assert first.result["already_done"] is False
    assert second.result["already_done"] is True
    task.refresh_from_db()
    assert task.completed_at == completed_at


def test_complete_task_with_a_bad_id_says_not_found():
    assert error_code(call("complete_task", task_id=42)) == "NOT_FOUND"
    assert error_code(call("complete_task", task_id="seven")) == "INVALID_ARGUMENTS"


def test_deleted_tasks_are_invisible_to_tools():
    task = services.task_create(title="Binned")
    Task.objects.filter(pk=task.pk).update(deleted_at=timezone.now())

    assert call("list_tasks").result["tasks"] == []
    assert error_code(call("complete_task", task_id=task.pk)) == "NOT_FOUND"


# --- projects ----------------------------------------------------------------------------------


def test_create_and_list_projects():
    outcome = call("create_project", name="Garden", description="Vegetables and flowers")

    assert outcome.ok
    project = Project.objects.get()
    assert project.description == "Vegetables and flowers"
    listed = call("list_projects").result
    assert listed["projects"] == [
        {"id": project.pk, "name": "Garden", "description": "Vegetables and flowers"}
    ]
    assert listed["total"] == 1


def test_create_project_without_a_name_creates_nothing():
    assert error_code(call("create_project", name="  ")) == "INVALID_ARGUMENTS"
    assert not Project.objects.exists()


# --- notes -------------------------------------------------------------------------------------


def test_create_note_then_read_it():
    created = call("create_note", title="Recipes", content="Pancakes: flour, eggs, milk.")
    note_id = created.result["note"]["id"]

    read = call("read_note", note_id=note_id).result["note"]

    assert read["title"] == "Recipes"
    assert read["content"] == "Pancakes: flour, eggs, milk."
    assert read["truncated"] is False


def test_read_note_cuts_a_very_long_note_and_says_so():
    note = services.note_create(title="Long", content="x" * 50_000)

    read = call("read_note", note_id=note.pk).result["note"]

    assert read["truncated"] is True
    assert read["length"] == 50_000
    assert len(read["content"]) < 50_000


def test_append_to_note_keeps_the_existing_text():
    note = services.note_create(title="Journal", content="Monday: rain.")

    outcome = call("append_to_note", note_id=note.pk, text="Tuesday: sun.")

    assert outcome.ok
    note.refresh_from_db()
    assert note.content == "Monday: rain.\n\nTuesday: sun."


def test_rename_note_keeps_its_text():
    note = services.note_create(title="Jornal", content="Monday: rain.")

    call("rename_note", note_id=note.pk, title="Journal")

    note.refresh_from_db()
    assert (note.title, note.content) == ("Journal", "Monday: rain.")


def test_note_tools_with_a_bad_id_change_nothing():
    note = services.note_create(title="Journal", content="Monday: rain.")
    before = Note.objects.values().get()

    assert error_code(call("read_note", note_id=999)) == "NOT_FOUND"
    assert error_code(call("append_to_note", note_id=999, text="x")) == "NOT_FOUND"
    assert error_code(call("rename_note", note_id=999, title="x")) == "NOT_FOUND"
    assert error_code(call("append_to_note", note_id=note.pk, text="")) == "INVALID_ARGUMENTS"
    assert error_code(call("rename_note", note_id=note.pk, title="")) == "INVALID_ARGUMENTS"
    assert Note.objects.values().get() == before


def test_list_and_search_notes():
    services.note_create(title="Recipes", content="Pancakes need flour, eggs and milk.")
    services.note_create(title="Trip", content="Train at 9 from the central station.")

    listed = call("list_notes").result
    found = call("search_notes", query="eggs").result

    assert listed["total"] == 2
    assert [n["title"] for n in found["notes"]] == ["Recipes"]
    assert "eggs" in found["notes"][0]["excerpt"]


# --- notifications -----------------------------------------------------------------------------


def test_notify_owner_in_chat_is_an_info_notification_from_chat():
    outcome = call("notify_owner", title="Rent paid", body="Transfer sent")

    assert outcome.ok
    notification = Notification.objects.get()
    assert (notification.title, notification.body) == ("Rent paid", "Transfer sent")
    assert (notification.kind, notification.source) == ("info", "chat")


def test_list_notifications_unread_only():
    read = notification_services.notification_create(title="Old news")
    notification_services.notification_mark_read(notification_id=read.pk)
    notification_services.notification_create(title="Fresh news")

    everything = call("list_notifications").result["notifications"]
    unread = call("list_notifications", unread_only=True).result["notifications"]

    assert {n["title"] for n in everything} == {"Old news", "Fresh news"}
    assert [(n["title"], n["read"]) for n in unread] == [("Fresh news", False)]


# --- unified search ----------------------------------------------------------------------------


def test_search_finds_across_kinds_and_can_be_narrowed():
    task = services.task_create(title="Renew passport")
    note = services.note_create(title="Documents", content="The passport expires in May.")

    everywhere = call("search", query="passport").result["hits"]
    notes_only = call("search", query="passport", kinds=["note"]).result["hits"]

    assert {(h["kind"], h["id"]) for h in everywhere} >= {("task", task.pk), ("note", note.pk)}
    assert [(h["kind"], h["id"]) for h in notes_only] == [("note", note.pk)]


def test_search_with_an_unknown_kind_is_an_argument_error():
    assert error_code(call("search", query="passport", kinds=["emails"])) == "INVALID_ARGUMENTS"
