"""/tasks/: quick add (due in the owner's zone), the filters, complete and reopen, edit, delete
to the bin; bad input is refused with a message and changes nothing."""

from __future__ import annotations

import datetime as dt
import re
from zoneinfo import ZoneInfo

import pytest
from django.utils import timezone

from talorys.owner.services.settings import owner_settings_update
from talorys.workspace import services
from talorys.workspace.models import Project, Task

PARIS = ZoneInfo("Europe/Paris")


@pytest.fixture
def signed_in(signed_in):
    owner_settings_update(time_zone="Europe/Paris")
    return signed_in


def flash(response) -> str:
    return " ".join(str(m) for m in response.context["messages"])


def rows(response) -> list[str]:
    """The titles of the listed tasks, in order."""
    return re.findall(r'class="task-title" href="/tasks/\d+/">([^<]*)</a>', response.text)


def test_the_page_needs_the_owner(client, db):
    response = client.get("/tasks/")
    assert response.status_code == 302
    assert response["Location"].startswith("/login/")


def test_quick_add_reads_the_due_time_in_the_owners_zone(signed_in):
    home = Project.objects.create(name="Home")
    response = signed_in.post(
        "/tasks/",
        {"title": " Water the plants ", "project_id": str(home.pk), "due_at": "2026-03-14T09:00"},
        follow=True,
    )
    task = Task.objects.get()
    assert (task.title, task.project, task.status) == ("Water the plants", home, "open")
    assert task.due_at == dt.datetime(2026, 3, 14, 8, 0, tzinfo=dt.UTC)  # 09:00 in Paris
    assert "Task “Water the plants” added." in flash(response)
    assert rows(response) == ["Water the plants"]
    assert 'title="14 Mar 2026, 09:00" data-when="relative">14 Mar 2026, 09:00<' in response.text
    assert f'href="/tasks/?project={home.pk}">Home</a>' in response.text


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"title": "   "}, "Title is empty: fill it in."),
        ({"title": "x" * (Task.TITLE_MAX + 1)}, f"longer than {Task.TITLE_MAX} characters"),
        ({"title": "Call", "due_at": "next tuesday"}, "Due: “next tuesday” is not a date"),
        ({"title": "Call", "due_at": "2300-01-01T00:00"}, "Due must be between"),
        ({"title": "Call", "project_id": "999"}, "Project 999 does not exist"),
        ({"title": "Call", "project_id": "abc"}, "Project: “abc” is not an id."),
    ],
)
def test_bad_input_to_quick_add_changes_nothing(signed_in, fields, message):
    response = signed_in.post("/tasks/", fields, follow=True)
    assert message in flash(response)
    assert not Task.objects.exists()


def test_filters_by_status_project_due_and_text(signed_in):
    now = timezone.now()
    work = Project.objects.create(name="Work")
    overdue = services.task_create(title="Pay rent", due_at=now - dt.timedelta(days=2))
    today = services.task_create(title="Call mum", due_at=now + dt.timedelta(minutes=1))
    undated = services.task_create(title="Read a book", project_id=work.pk)
    done = services.task_create(title="File taxes", project_id=work.pk)
    services.task_complete(task_id=done.pk)

    assert set(rows(signed_in.get("/tasks/"))) == {"Pay rent", "Call mum", "Read a book"}
    assert rows(signed_in.get("/tasks/?status=done")) == ["File taxes"]
    assert len(rows(signed_in.get("/tasks/?status=all"))) == 4
    assert rows(signed_in.get(f"/tasks/?project={work.pk}")) == ["Read a book"]
    assert rows(signed_in.get("/tasks/?due=overdue")) == ["Pay rent"]
    assert rows(signed_in.get("/tasks/?due=none&status=all")) == ["Read a book", "File taxes"]
    assert "Call mum" in rows(signed_in.get("/tasks/?due=today"))
    assert "Call mum" in rows(signed_in.get("/tasks/?due=week"))
    assert rows(signed_in.get("/tasks/?q=RENT")) == ["Pay rent"]
    page = signed_in.get("/tasks/").text
    # Only the open task past its date is marked.
    assert page.count('<span class="tag err">Overdue</span>') == 1
    assert overdue.pk and today.pk and undated.pk


def test_today_is_the_owners_calendar_day(signed_in):
    """At 23:30 in Paris, a task due at 00:30 Paris time is tomorrow, though UTC says today."""
    local_now = timezone.localtime(timezone.now(), PARIS)
    tomorrow = (local_now + dt.timedelta(days=1)).date()
    due = dt.datetime.combine(tomorrow, dt.time(0, 30), tzinfo=PARIS)
    services.task_create(title="Early train", due_at=due)
    assert rows(signed_in.get("/tasks/?due=today")) == []


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("status=later", "Status “later” is not one of open, done, all"),
        ("project=abc", "Project: “abc” is not an id."),
        ("project=999", "There is no project 999"),
        ("due=soon", "Due “soon” is not a filter"),
        ("page=two", "“two” is not a page number; this is page 1."),
    ],
)
def test_bad_filters_say_so_and_show_the_list(signed_in, query, message):
    services.task_create(title="Pay rent")
    response = signed_in.get(f"/tasks/?{query}")
    assert response.status_code == 200
    assert message in response.text
    assert rows(response) == ["Pay rent"]


def test_complete_reopen_and_delete_to_the_bin(signed_in):
    task = services.task_create(title="Buy milk")
    response = signed_in.post(f"/tasks/{task.pk}/complete/", {"next": "/tasks/?q=milk"})
    assert response.status_code == 303 and response["Location"] == "/tasks/?q=milk"
    task.refresh_from_db()
    assert task.status == "done" and task.completed_at is not None

    signed_in.post(f"/tasks/{task.pk}/reopen/")
    task.refresh_from_db()
    assert task.status == "open" and task.completed_at is None

    response = signed_in.post(f"/tasks/{task.pk}/delete/", follow=True)
    task.refresh_from_db()
    assert task.deleted_at is not None
    assert rows(response) == []
    assert 'Task “Buy milk” moved to the bin. <a href="/bin/">Open the bin</a>' in response.text

    again = signed_in.post(f"/tasks/{task.pk}/delete/", follow=True)
    assert f"Task {task.pk} does not exist." in flash(again)


def test_a_title_with_markup_is_shown_as_text(signed_in):
    services.task_create(title="<img src=x onerror=alert(1)>")
    page = signed_in.get("/tasks/").text
    assert "<img src=x" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page


def test_the_edit_page_changes_every_field(signed_in):
    work = Project.objects.create(name="Work")
    task = services.task_create(title="Draft", due_at=dt.datetime(2026, 7, 1, 7, 0, tzinfo=dt.UTC))
    page = signed_in.get(f"/tasks/{task.pk}/").text
    assert 'value="2026-07-01T09:00"' in page  # shown in Paris time, as the input wants it

    response = signed_in.post(
        f"/tasks/{task.pk}/",
        {
            "title": "Final report",
            "details": "Send it to Ana",
            "project_id": str(work.pk),
            "due_at": "2026-12-24T18:30",
            "priority": "3",
            "status": "done",
        },
        follow=True,
    )
    assert "Task saved." in flash(response)
    task.refresh_from_db()
    assert (task.title, task.details, task.project, task.priority, task.status) == (
        "Final report",
        "Send it to Ana",
        work,
        3,
        "done",
    )
    assert task.due_at == dt.datetime(2026, 12, 24, 17, 30, tzinfo=dt.UTC)

    signed_in.post(f"/tasks/{task.pk}/", {"project_id": "", "due_at": ""})
    task.refresh_from_db()
    assert task.project is None and task.due_at is None and task.title == "Final report"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"title": ""}, "Title is empty: fill it in."),
        ({"due_at": "31/12/2026"}, "is not a date and time"),
        ({"project_id": "12345"}, "Project 12345 does not exist"),
        ({"priority": "9"}, "Priority must be 1 (low), 2 (normal) or 3 (high)."),
        ({"status": "later"}, "Status must be 'open' or 'done'."),
    ],
)
def test_bad_input_on_the_edit_page_changes_nothing(signed_in, fields, message):
    task = services.task_create(title="Draft", details="first")
    form = {"title": "Changed", "details": "second"} | fields
    response = signed_in.post(f"/tasks/{task.pk}/", form, follow=True)
    assert message in flash(response)
    task.refresh_from_db()
    assert (task.title, task.details) == ("Draft", "first")


def test_a_missing_or_binned_task_has_no_page(signed_in):
    task = services.task_create(title="Gone")
    services.task_delete(task_id=task.pk)
    assert signed_in.get(f"/tasks/{task.pk}/").status_code == 404
    assert signed_in.get("/tasks/999999/").status_code == 404


def test_ten_thousand_tasks_page_in_a_few_queries(signed_in, django_assert_max_num_queries):
    projects = Project.objects.bulk_create(Project(name=f"Project {n}") for n in range(20))
    Task.objects.bulk_create(
        Task(title=f"Task {n}", project=projects[n % 20]) for n in range(10_000)
    )
    # Session, user, owner settings, the projects for the selects, the count, the page; and
    # the session's save (its idle clock) in a savepoint.
    with django_assert_max_num_queries(9):
        response = signed_in.get("/tasks/?page=3")
    assert len(rows(response)) == 50
    assert "Page 3 of 200 · 10000 in all" in response.text


def test_the_api_offers_the_same_due_filters(api):
    owner_settings_update(time_zone="Europe/Paris")
    services.task_create(title="Pay rent", due_at=timezone.now() - dt.timedelta(hours=1))
    services.task_create(title="Read a book")
    titles = lambda due: [t["title"] for t in api.get("/api/tasks", {"due": due}).json()["items"]]  # noqa: E731
    assert titles("overdue") == ["Pay rent"]
    assert titles("none") == ["Read a book"]
    assert api.get("/api/tasks", {"due": "soon"}).status_code == 422
