"""The owner's core data over the JSON API: projects, tasks, notes, notifications."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from talorys.notifications import services as notification_services
from talorys.notifications.models import Notification
from talorys.workspace import services
from talorys.workspace.models import Note, Project, Task

UTC = dt.UTC


def rows(model) -> list[dict]:
    return list(model.objects.order_by("pk").values())


def assert_error(response, status: int, code: str) -> None:
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith("application/json")
    assert response.json()["error"]["code"] == code


# --- projects ----------------------------------------------------------------------------------


def test_project_crud(api):
    created = api.post("/api/projects", {"name": " Home ", "description": "The flat"})
    assert created.status_code == 201, created.content
    project = created.json()
    assert project["name"] == "Home"
    assert project["description"] == "The flat"

    assert api.get(f"/api/projects/{project['id']}").json()["name"] == "Home"

    patched = api.patch(f"/api/projects/{project['id']}", {"description": "The new flat"})
    assert patched.status_code == 200
    assert patched.json() | {"updated_at": None} == project | {
        "description": "The new flat",
        "updated_at": None,
        "version": 2,
    }

    assert api.delete(f"/api/projects/{project['id']}").status_code == 204
    assert not Project.objects.live().exists()  # in the bin (tests/history/test_bin.py)
    assert_error(api.get(f"/api/projects/{project['id']}"), 404, "NOT_FOUND")


def test_project_list_filters_by_q(api):
    services.project_create(name="Garden", description="Plant tomatoes")
    services.project_create(name="Taxes")

    listed = api.get("/api/projects", {"q": "tomato"}).json()

    assert listed["count"] == 1
    assert [p["name"] for p in listed["items"]] == ["Garden"]


def test_deleting_a_project_keeps_its_tasks(api):
    project = services.project_create(name="Home")
    task = services.task_create(title="Fix the sink", project_id=project.pk)

    assert api.delete(f"/api/projects/{project.pk}").status_code == 204

    body = api.get(f"/api/tasks/{task.pk}").json()
    assert body["title"] == "Fix the sink"
    assert body["project"] is None


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"name": ""},
        {"name": "   "},
        {"name": "x" * 201},
        {"name": "Home", "colour": "red"},
        {"name": 7},
    ],
)
def test_bad_project_input_creates_nothing(api, body):
    assert_error(api.post("/api/projects", body), 422, "VALIDATION")
    assert not Project.objects.exists()


@pytest.mark.parametrize(
    "body", [{"name": ""}, {"name": None}, {"name": "x" * 201}, {"owner": "me"}]
)
def test_bad_project_patch_changes_nothing(api, body):
    project = services.project_create(name="Home")
    before = rows(Project)

    assert_error(api.patch(f"/api/projects/{project.pk}", body), 422, "VALIDATION")
    assert rows(Project) == before


# --- tasks -------------------------------------------------------------------------------------


def test_task_crud(api):
    project = services.project_create(name="Home")
    created = api.post(
        "/api/tasks",
        {
            "title": "Pay rent",
            "details": "Bank transfer",
            "priority": 3,
            "due_at": "2026-03-01T09:00:00+01:00",
            "project_id": project.pk,
        },
    )
    assert created.status_code == 201, created.content
    task = created.json()
    assert task["status"] == "open"
    assert task["priority"] == 3
    assert task["project"] == {"id": project.pk, "name": "Home"}
    assert dt.datetime.fromisoformat(task["due_at"]) == dt.datetime(2026, 3, 1, 8, tzinfo=UTC)

    done = api.patch(f"/api/tasks/{task['id']}", {"status": "done"}).json()
    assert done["status"] == "done"
    assert done["completed_at"] is not None

    reopened = api.patch(f"/api/tasks/{task['id']}", {"status": "open", "project_id": None})
    assert reopened.json()["completed_at"] is None
    assert reopened.json()["project"] is None

    assert api.delete(f"/api/tasks/{task['id']}").status_code == 204
    assert_error(api.get(f"/api/tasks/{task['id']}"), 404, "NOT_FOUND")
    assert not Task.objects.live().exists()  # in the bin


def test_patch_can_clear_a_due_date(api):
    task = services.task_create(title="Call mum", due_at=dt.datetime(2026, 1, 1, tzinfo=UTC))

    body = api.patch(f"/api/tasks/{task.pk}", {"due_at": None}).json()

    assert body["due_at"] is None
    assert Task.objects.get().due_at is None


@pytest.fixture
def task_set(db):
    home = services.project_create(name="Home")
    work = services.project_create(name="Work")
    tasks = {
        "rent": services.task_create(
            title="Pay rent", project_id=home.pk, due_at=dt.datetime(2026, 3, 1, 9, tzinfo=UTC)
        ),
        "report": services.task_create(
            title="Write report",
            details="quarterly numbers",
            project_id=work.pk,
            due_at=dt.datetime(2026, 3, 10, 9, tzinfo=UTC),
        ),
        "plants": services.task_create(title="Water plants", project_id=home.pk),
    }
    services.task_complete(task_id=tasks["plants"].pk)
    return {"home": home, "work": work, **tasks}


def titles(response) -> set[str]:
    assert response.status_code == 200, response.content
    return {item["title"] for item in response.json()["items"]}


def test_task_filters(api, task_set):
    assert titles(api.get("/api/tasks")) == {"Pay rent", "Write report", "Water plants"}
    assert titles(api.get("/api/tasks", {"status": "open"})) == {"Pay rent", "Write report"}
    assert titles(api.get("/api/tasks", {"status": "done"})) == {"Water plants"}
    assert titles(api.get("/api/tasks", {"project": task_set["home"].pk})) == {
        "Pay rent",
        "Water plants",
    }
    assert titles(api.get("/api/tasks", {"due_before": "2026-03-05T00:00:00Z"})) == {"Pay rent"}
    assert titles(api.get("/api/tasks", {"due_after": "2026-03-05T00:00:00+00:00"})) == {
        "Write report"
    }
    assert titles(api.get("/api/tasks", {"q": "QUARTERLY"})) == {"Write report"}
    assert titles(api.get("/api/tasks", {"q": "rent"})) == {"Pay rent"}
    assert titles(
        api.get(
            "/api/tasks",
            {"status": "open", "project": task_set["home"].pk, "due_before": "2027-01-01T00:00Z"},
        )
    ) == {"Pay rent"}


def test_due_filters_respect_the_offset(api, task_set):
    # 09:00 UTC on 1 March is 10:00 in Paris: "before 09:30 Paris time" excludes it.
    assert titles(api.get("/api/tasks", {"due_before": "2026-03-01T09:30:00+01:00"})) == set()
    assert titles(api.get("/api/tasks", {"due_before": "2026-03-01T10:30:00+01:00"})) == {
        "Pay rent"
    }


@pytest.mark.parametrize(
    "params",
    [
        {"status": "finished"},
        {"due_before": "2026-03-05T00:00:00"},  # naive: which time zone?
        {"due_after": "tomorrow"},
        {"project": "home"},
        {"limit": 0},
        {"offset": -1},
        {"q": "re\x00nt"},
    ],
)
def test_bad_task_filters_are_rejected(api, task_set, params):
    assert_error(api.get("/api/tasks", params), 422, "VALIDATION")


@pytest.mark.parametrize("path", ["/api/projects", "/api/notes", "/api/memories"])
def test_a_nul_character_in_a_list_query_is_rejected(api, path):
    assert_error(api.get(path, {"q": "to\x00mato"}), 422, "VALIDATION")


def test_soft_deleted_tasks_are_invisible(api, task_set):
    Task.objects.filter(pk=task_set["rent"].pk).update(deleted_at=timezone.now())

    assert "Pay rent" not in titles(api.get("/api/tasks"))
    assert_error(api.get(f"/api/tasks/{task_set['rent'].pk}"), 404, "NOT_FOUND")
    assert_error(api.patch(f"/api/tasks/{task_set['rent'].pk}", {"title": "x"}), 404, "NOT_FOUND")


@pytest.mark.parametrize(
    "body",
    [
        {"title": ""},
        {"title": "   "},
        {"title": "x" * 501},
        {"title": "Pay rent", "priority": 4},
        {"title": "Pay rent", "priority": 0},
        {"title": "Pay rent", "due_at": "2026-03-01T09:00:00"},  # naive
        {"title": "Pay rent", "due_at": "next friday"},
        {"title": "Pay rent", "project_id": 999},
        {"title": "Pay rent", "status": "done"},  # not an input of create
        {"title": "Pay rent", "tags": ["home"]},
        {"details": "no title"},
        {"title": "Pay\x00rent"},  # PostgreSQL cannot store a NUL character
    ],
)
def test_bad_task_input_creates_nothing(api, body):
    assert_error(api.post("/api/tasks", body), 422, "VALIDATION")
    assert not Task.objects.exists()


@pytest.mark.parametrize(
    "body",
    [
        {"title": ""},
        {"title": None},
        {"status": "finished"},
        {"priority": 5},
        {"due_at": "2026-03-01T09:00:00"},
        {"project_id": 999},
        {"title": "Ok", "colour": "red"},
        {"title": "Changed", "priority": 9},  # a bad field spoils the whole patch
    ],
)
def test_bad_task_patch_changes_nothing(api, task_set, body):
    before = rows(Task)

    assert_error(api.patch(f"/api/tasks/{task_set['rent'].pk}", body), 422, "VALIDATION")
    assert rows(Task) == before


def test_task_input_must_be_json(api):
    response = api.client.post(
        "/api/tasks",
        data="title=Pay+rent",
        content_type="application/x-www-form-urlencoded",
        headers={"X-CSRFToken": api.csrf_token},
    )
    assert response.status_code in {400, 422}
    assert "error" in response.json()
    assert not Task.objects.exists()


# --- pagination --------------------------------------------------------------------------------


def test_lists_paginate_with_limit_offset_and_count(api):
    for name in ["Alpha", "Bravo", "Charlie", "Delta", "Echo"]:
        services.project_create(name=name)

    page = api.get("/api/projects", {"limit": 2, "offset": 1}).json()

    assert page["count"] == 5
    assert [p["name"] for p in page["items"]] == ["Bravo", "Charlie"]
    last = api.get("/api/projects", {"limit": 2, "offset": 4}).json()
    assert [p["name"] for p in last["items"]] == ["Echo"]
    assert api.get("/api/projects", {"offset": 10}).json() == {"items": [], "count": 5}


def test_task_count_follows_the_filters(api, task_set):
    page = api.get("/api/tasks", {"status": "open", "limit": 1}).json()

    assert page["count"] == 2
    assert len(page["items"]) == 1


# --- notes -------------------------------------------------------------------------------------


def test_note_crud(api):
    created = api.post("/api/notes", {"title": "Recipes", "content": "Pancakes: eggs, flour"})
    assert created.status_code == 201, created.content
    note = created.json()

    listed = api.get("/api/notes", {"q": "flour"}).json()
    assert [n["id"] for n in listed["items"]] == [note["id"]]
    assert api.get("/api/notes", {"q": "basil"}).json()["count"] == 0

    renamed = api.patch(f"/api/notes/{note['id']}", {"title": "Breakfast"}).json()
    assert renamed["title"] == "Breakfast"
    assert renamed["content"] == "Pancakes: eggs, flour"

    assert api.delete(f"/api/notes/{note['id']}").status_code == 204
    assert_error(api.get(f"/api/notes/{note['id']}"), 404, "NOT_FOUND")
    assert not Note.objects.live().exists()  # in the bin


@pytest.mark.parametrize(
    "body",
    [{"title": ""}, {"content": "no title"}, {"title": "x" * 301}, {"title": "A", "pinned": True}],
)
def test_bad_note_input_creates_nothing(api, body):
    assert_error(api.post("/api/notes", body), 422, "VALIDATION")
    assert not Note.objects.exists()


@pytest.mark.parametrize("body", [{"title": ""}, {"title": None}, {"body": "wrong field"}])
def test_bad_note_patch_changes_nothing(api, body):
    note = services.note_create(title="Recipes", content="Pancakes")
    before = rows(Note)

    assert_error(api.patch(f"/api/notes/{note.pk}", body), 422, "VALIDATION")
    assert rows(Note) == before


# --- missing ids -------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["projects", "tasks", "notes"])
def test_missing_ids_answer_404_in_the_envelope(api, kind):
    assert_error(api.get(f"/api/{kind}/999"), 404, "NOT_FOUND")
    assert_error(api.patch(f"/api/{kind}/999", {}), 404, "NOT_FOUND")
    assert_error(api.delete(f"/api/{kind}/999"), 404, "NOT_FOUND")
    assert "999" in api.get(f"/api/{kind}/999").json()["error"]["message"]


# --- notifications -----------------------------------------------------------------------------


def test_notifications_list_newest_first_and_filter_unread(api):
    old = notification_services.notification_create(title="Old news")
    new = notification_services.notification_create(
        title="Rent is due", body="Today", kind="reminder"
    )
    Notification.objects.filter(pk=old.pk).update(read_at=timezone.now())

    everything = api.get("/api/notifications").json()
    assert everything["count"] == 2
    assert [n["title"] for n in everything["items"]] == ["Rent is due", "Old news"]
    assert everything["items"][0]["kind"] == "reminder"

    unread = api.get("/api/notifications", {"unread": "true"}).json()
    assert [n["id"] for n in unread["items"]] == [new.pk]
    read = api.get("/api/notifications", {"unread": "false"}).json()
    assert [n["id"] for n in read["items"]] == [old.pk]


def test_mark_a_notification_read_once(api):
    notification = notification_services.notification_create(title="Rent is due")

    first = api.post(f"/api/notifications/{notification.pk}/read")
    assert first.status_code == 200
    read_at = first.json()["read_at"]
    assert read_at is not None
    assert api.get("/api/notifications", {"unread": "true"}).json()["count"] == 0

    # Reading it again keeps the first reading time.
    again = api.post(f"/api/notifications/{notification.pk}/read")
    assert again.json()["read_at"] == read_at


def test_missing_notification_answers_404(api):
    assert_error(api.post("/api/notifications/999/read"), 404, "NOT_FOUND")


def test_mark_read_needs_the_csrf_header(api):
    notification = notification_services.notification_create(title="Rent is due")
    api.csrf_token = ""

    response = api.post(f"/api/notifications/{notification.pk}/read")

    assert response.status_code == 403
    assert Notification.objects.get().read_at is None


@pytest.mark.parametrize(
    "path", ["/api/projects", "/api/notes", "/api/notifications", "/api/tasks/1"]
)
def test_data_needs_the_owner(anon_api, path):
    assert_error(anon_api.get(path), 401, "UNAUTHORIZED")


def test_quiet_hours_with_an_offset_are_refused_and_change_nothing(api):
    """Found by `make fuzz`: a time with an offset reached the model field and answered 500."""
    before = api.get("/api/settings").json()
    response = api.patch("/api/settings", {"quiet_hours_start": "22:00:00+01:00"})
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "VALIDATION"
    assert "without an offset" in response.json()["error"]["message"]
    assert api.get("/api/settings").json() == before
    both = {"quiet_hours_start": "22:00", "quiet_hours_end": "07:00"}
    assert api.patch("/api/settings", both).status_code == 200
