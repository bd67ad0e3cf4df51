"""Quick add in the owner's words (talorys/workspace/views/quick_add.py, talorys/lib/when.py) and
refused forms that keep what was typed (talorys/lib/kept.py): "buy milk tomorrow 9am" is a task
due then, "water plants every monday" a repeating task, and the page shows what it read before
adding."""

from __future__ import annotations

import datetime as dt
import html
import re
from zoneinfo import ZoneInfo

import pytest
from django.utils import timezone

from automations.models import Automation
from talorys.owner.services.settings import owner_settings_update
from talorys.workspace import services
from talorys.workspace.models import Note, Project, Task

PARIS = ZoneInfo("Europe/Paris")


@pytest.fixture
def signed_in(signed_in):
    owner_settings_update(time_zone="Europe/Paris")
    return signed_in


def flash(response) -> str:
    return " ".join(html.unescape(str(m)) for m in response.context["messages"])


def field(response, name: str) -> str:
    """The value the page's field ``name`` shows."""
    match = re.search(rf'<input[^>]*name="{name}"[^>]*>', response.text)
    assert match is not None, name
    value = re.search(r'value="([^"]*)"', match.group(0))
    return html.unescape(value.group(1)) if value else ""


def tomorrow_at(hour: int) -> dt.datetime:
    day = timezone.localtime(timezone.now(), PARIS).date() + dt.timedelta(days=1)
    return dt.datetime.combine(day, dt.time(hour), tzinfo=PARIS)


@pytest.mark.parametrize("path", ["/tasks/quick-add/", "/tasks/"])
def test_a_refused_quick_add_keeps_everything_typed(signed_in, path):
    home = Project.objects.create(name="Home")
    typed = {"title": "Pay the bills", "project_id": str(home.pk), "due_at": "9999-12-31T10:00"}
    response = signed_in.post(path, typed, follow=True)
    assert "Due must be between" in flash(response)
    assert not Task.objects.exists()
    assert field(response, "title") == "Pay the bills"
    assert field(response, "due_at") == "9999-12-31T10:00"
    assert f'<option value="{home.pk}" selected>Home</option>' in response.text
    # Once: the next visit starts empty.
    assert field(signed_in.get("/tasks/"), "title") == ""


def test_a_refused_task_edit_keeps_everything_typed(signed_in):
    task = services.task_create(title="Call Ana", details="old")
    typed = {"title": "   ", "details": "new details", "priority": "3", "version": task.version}
    response = signed_in.post(f"/tasks/{task.pk}/", typed, follow=True)
    assert "Title is empty: fill it in." in flash(response)
    assert "new details</textarea>" in response.text
    assert '<option value="3" selected>' in response.text
    task.refresh_from_db()
    assert (task.title, task.details) == ("Call Ana", "old")


def test_dated_words_are_shown_before_they_are_added(signed_in):
    words = "buy milk tomorrow 9am"
    response = signed_in.post("/tasks/quick-add/", {"title": words}, follow=True)
    assert not Task.objects.exists()
    said = f"Due {tomorrow_at(9):%a} {tomorrow_at(9).day} {tomorrow_at(9):%b}, 09:00"
    assert f"Read “{words}” as: {said} · adds “buy milk”" in flash(response)
    assert field(response, "title") == words
    assert field(response, "seen") == words
    assert said in html.unescape(response.text.split('id="new-title-hint"')[1][:200])
    # Add again, the page having shown what it read: the task is added.
    response = signed_in.post(
        "/tasks/quick-add/", {"title": words, "seen": field(response, "seen")}, follow=True
    )
    task = Task.objects.get()
    assert (task.title, task.due_at) == ("buy milk", tomorrow_at(9))
    assert f"Task “buy milk” added, due {said[4:]}." in flash(response)


def test_words_without_a_date_are_added_at_once(signed_in):
    signed_in.post("/tasks/quick-add/", {"title": "I may call Sam"})
    task = Task.objects.get()
    assert (task.title, task.due_at) == ("I may call Sam", None)


def test_words_that_are_only_a_date_are_refused_and_kept(signed_in):
    words = "tomorrow 9am"
    body = signed_in.get("/tasks/understand/", {"text": words}).json()
    assert body["alone"] is True
    assert body["said"].startswith("Only a date (Due ")
    assert body["said"].endswith("say what to do too, e.g. “call Ana tomorrow 9am”")
    response = signed_in.post("/tasks/quick-add/", {"title": words, "seen": words}, follow=True)
    assert "“tomorrow 9am” is only a date (due " in flash(response)
    assert not Task.objects.exists()
    assert field(response, "title") == words
    # Kept as typed, the words are the title.
    signed_in.post("/tasks/quick-add/", {"title": words, "literal": "1"})
    assert Task.objects.get().title == words


def test_keep_the_words_as_typed(signed_in):
    signed_in.post("/tasks/quick-add/", {"title": "Read Tomorrow 9am", "literal": "1"})
    task = Task.objects.get()
    assert (task.title, task.due_at) == ("Read Tomorrow 9am", None)


def test_a_repeating_phrase_makes_a_repeating_task(signed_in):
    words = "water plants every monday 8am"
    response = signed_in.post("/tasks/quick-add/", {"title": words, "seen": words}, follow=True)
    assert not Automation.objects.exists()
    task = Task.objects.get()
    assert task.title == "water plants"
    assert task.repeat == {"type": "weekly", "days": ["mon"], "time": "08:00"}
    due = task.due_at.astimezone(PARIS)
    assert (due.weekday(), due.hour, due.minute) == (0, 8, 0)
    assert due > timezone.now()
    said = flash(response)
    assert "Task “water plants” added, every Monday at 08:00, first due Mon" in said


def test_the_hint_endpoint_says_what_it_reads(signed_in):
    body = signed_in.get("/tasks/understand/", {"text": "standup every weekday 9am"}).json()
    assert body["repeats"] is True
    assert body["said"] == "Every weekday at 09:00 · adds “standup”, repeating"
    body = signed_in.get("/tasks/understand/", {"text": "I may call Sam"}).json()
    assert (body["said"], body["due"]) == ("", None)
    body = signed_in.get("/tasks/understand/", {"text": "tomorrow 9am", "field": "due"}).json()
    assert body["due"] == tomorrow_at(9).isoformat()


def test_the_hint_endpoint_needs_the_owner(client, db):
    assert client.get("/tasks/understand/?text=x").status_code == 302


def test_due_in_words_on_the_task_form(signed_in):
    task = services.task_create(title="Call Ana")
    signed_in.post(f"/tasks/{task.pk}/", {"due_words": "tomorrow 9am", "version": task.version})
    task.refresh_from_db()
    assert task.due_at == tomorrow_at(9)


@pytest.mark.parametrize(
    ("words", "message"),
    [
        ("every monday", "Due in words: “every monday” repeats. Type it in the Repeats field"),
        ("whenever", "Due in words: “whenever” is not a date we can read"),
        ("tomorrow with Sam", "Due in words: “tomorrow with Sam” is not a date we can read"),
    ],
)
def test_due_in_words_refused_changes_nothing_and_keeps_the_words(signed_in, words, message):
    task = services.task_create(title="Call Ana")
    typed = {"title": "Call Ana soon", "due_words": words, "version": task.version}
    response = signed_in.post(f"/tasks/{task.pk}/", typed, follow=True)
    assert message in flash(response)
    task.refresh_from_db()
    assert (task.title, task.due_at) == ("Call Ana", None)
    assert field(response, "due_words") == words
    assert field(response, "title") == "Call Ana soon"


def test_refused_project_and_note_forms_keep_what_was_typed(signed_in):
    response = signed_in.post(
        "/projects/", {"name": "  ", "description": "Things for the house"}, follow=True
    )
    assert field(response, "description") == "Things for the house"
    assert not Project.objects.exists()
    project = Project.objects.create(name="Home")
    typed = {"name": "x" * (Project.NAME_MAX + 1), "description": "new", "version": 1}
    response = signed_in.post(f"/projects/{project.pk}/", typed, follow=True)
    assert field(response, "name") == typed["name"]
    assert ">new</textarea>" in response.text

    note = services.note_create(title="Groceries")
    draft = "eggs " * (Note.CONTENT_MAX // 5) + "and bread"
    response = signed_in.post(
        f"/notes/{note.pk}/", {"content": draft, "version": note.version}, follow=True
    )
    assert f">{draft}</textarea>" in response.text
    response = signed_in.post(
        f"/notes/{note.pk}/rename/", {"title": "y" * 301, "next": f"/notes/{note.pk}/"}, follow=True
    )
    assert field(response, "title") == "y" * 301
    note.refresh_from_db()
    assert note.title == "Groceries"
