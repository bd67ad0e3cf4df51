"""Repeating tasks (talorys/workspace/services/tasks.py): completing one keeps it open and moves
its due date to the next occurrence of its schedule (talorys/lib/schedules.py, the automations'
rules) after the later of its due date and now; the move is in the change log, and reverting it
puts the task back as it was. Over the API: repeat on create, PATCH and read, null stops it, a bad
rule is a 422 naming the field that changes nothing."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest
import time_machine

from talorys.history.changes import change_revert
from talorys.history.models import Change
from talorys.lib.errors import ValidationFailed
from talorys.owner.services.settings import owner_settings_update
from talorys.workspace import services
from talorys.workspace.models import Task

PARIS = ZoneInfo("Europe/Paris")
MONDAYS_8 = {"type": "weekly", "days": ["mon"], "time": "08:00"}
DAILY_7 = {"type": "daily", "time": "07:00"}


@pytest.fixture(autouse=True)
def paris(owner):
    owner_settings_update(time_zone="Europe/Paris")


def at(*parts: int) -> dt.datetime:
    return dt.datetime(*parts, tzinfo=PARIS)


def test_completing_a_repeating_task_keeps_it_open_due_at_the_next_occurrence():
    task = services.task_create(title="water plants", due_at=at(2026, 12, 7, 8), repeat=MONDAYS_8)
    with time_machine.travel(at(2026, 12, 7, 9), tick=False):
        done = services.task_complete(task_id=task.pk)
    assert (done.status, done.completed_at) == (Task.Status.OPEN, None)
    assert done.due_at == at(2026, 12, 14, 8)
    assert Task.objects.get().due_at == at(2026, 12, 14, 8)


def test_an_overdue_task_completed_today_is_next_due_after_now_not_after_its_due():
    task = services.task_create(title="stretch", due_at=at(2026, 12, 1, 7), repeat=DAILY_7)
    with time_machine.travel(at(2026, 12, 4, 12), tick=False):
        done = services.task_complete(task_id=task.pk)
    assert done.due_at == at(2026, 12, 5, 7)


def test_a_task_completed_early_is_next_due_after_its_due_date():
    task = services.task_create(title="water plants", due_at=at(2026, 12, 14, 8), repeat=MONDAYS_8)
    with time_machine.travel(at(2026, 12, 13, 18), tick=False):
        done = services.task_complete(task_id=task.pk)
    assert done.due_at == at(2026, 12, 21, 8)


def test_weekly_across_the_change_to_summer_time_keeps_the_wall_clock_time():
    # Paris moves to summer time on Sunday 29 March 2026: 08:00 is 07:00 UTC before, 06:00 after.
    task = services.task_create(title="bins out", due_at=at(2026, 3, 23, 8), repeat=MONDAYS_8)
    with time_machine.travel(at(2026, 3, 23, 8, 30), tick=False):
        done = services.task_complete(task_id=task.pk)
    assert done.due_at.astimezone(PARIS).replace(tzinfo=None) == dt.datetime(2026, 3, 30, 8)
    assert done.due_at == dt.datetime(2026, 3, 30, 6, tzinfo=dt.UTC)


def test_monthly_on_the_31st_is_the_last_day_of_a_shorter_month():
    rent = {"type": "monthly", "day": 31, "time": "09:00"}
    task = services.task_create(title="pay rent", due_at=at(2027, 1, 31, 9), repeat=rent)
    with time_machine.travel(at(2027, 1, 31, 10), tick=False):
        done = services.task_complete(task_id=task.pk)
    assert done.due_at == at(2027, 2, 28, 9)


def test_reverting_the_completion_puts_the_task_back_as_it_was():
    task = services.task_create(title="water plants", due_at=at(2026, 12, 7, 8), repeat=MONDAYS_8)
    with time_machine.travel(at(2026, 12, 7, 9), tick=False):
        services.task_complete(task_id=task.pk)
    completion = Change.objects.filter(kind="task", object_id=task.pk).latest("id")
    assert completion.before["due_at"] != completion.after["due_at"]
    change_revert(change_id=completion.pk)
    task.refresh_from_db()
    assert (task.status, task.due_at, task.repeat) == (
        Task.Status.OPEN,
        at(2026, 12, 7, 8),
        MONDAYS_8,
    )


def test_a_task_that_does_not_repeat_is_closed_as_before():
    task = services.task_create(title="call Ana", due_at=at(2026, 12, 7, 8))
    done = services.task_complete(task_id=task.pk)
    assert done.status == Task.Status.DONE
    assert done.completed_at is not None
    assert done.due_at == at(2026, 12, 7, 8)
    assert done.repeat is None


def test_a_repeat_without_a_due_date_is_due_at_its_first_occurrence_from_now():
    with time_machine.travel(at(2026, 12, 3, 12), tick=False):  # a Thursday
        task = services.task_create(title="water plants", repeat=MONDAYS_8)
        undated = services.task_create(title="stretch")
        later = services.task_update(task_id=undated.pk, repeat=DAILY_7)
    assert task.due_at == at(2026, 12, 7, 8)
    assert later.due_at == at(2026, 12, 4, 7)


def test_stopping_the_repeat_makes_completion_close_the_task():
    task = services.task_create(title="water plants", due_at=at(2026, 12, 7, 8), repeat=MONDAYS_8)
    services.task_update(task_id=task.pk, repeat=None)
    assert services.task_complete(task_id=task.pk).status == Task.Status.DONE


@pytest.mark.parametrize(
    ("repeat", "said"),
    [
        (
            {"type": "once", "at": "2026-12-07T08:00:00+01:00"},
            "repeat: type must be one of daily, weekly, monthly, cron",
        ),
        ({"type": "weekly", "days": [], "time": "08:00"}, "repeat.days"),
        ({"type": "daily", "time": "25:00"}, "repeat.time"),
        ({"type": "cron", "expression": "nope"}, "repeat.expression"),
    ],
)
def test_a_bad_rule_is_refused_by_the_service_and_changes_nothing(repeat, said):
    task = services.task_create(title="water plants", due_at=at(2026, 12, 7, 8))
    with pytest.raises(ValidationFailed) as refused:
        services.task_update(task_id=task.pk, repeat=repeat)
    assert said in refused.value.message
    assert refused.value.details == {"field": "repeat"}
    assert Task.objects.get().repeat is None


# --- the API ------------------------------------------------------------------------------------


def test_the_api_creates_reads_patches_and_stops_a_repeat(api):
    with time_machine.travel(at(2026, 12, 3, 12), tick=False):
        created = api.post("/api/tasks", {"title": "water plants", "repeat": MONDAYS_8})
    assert created.status_code == 201, created.content
    body = created.json()
    assert body["repeat"] == MONDAYS_8
    assert dt.datetime.fromisoformat(body["due_at"]) == at(2026, 12, 7, 8)
    read = api.get(f"/api/tasks/{body['id']}").json()
    assert read["repeat"] == MONDAYS_8
    patched = api.patch(f"/api/tasks/{body['id']}", {"repeat": DAILY_7})
    assert patched.status_code == 200, patched.content
    assert patched.json()["repeat"] == DAILY_7
    stopped = api.patch(f"/api/tasks/{body['id']}", {"repeat": None})
    assert stopped.json()["repeat"] is None
    assert Task.objects.get().repeat is None


def test_completing_over_the_api_rolls_the_task_forward(api):
    task = services.task_create(title="water plants", due_at=at(2026, 12, 7, 8), repeat=MONDAYS_8)
    with time_machine.travel(at(2026, 12, 7, 9), tick=False):
        done = api.patch(f"/api/tasks/{task.pk}", {"status": "done"}).json()
    assert done["status"] == "open"
    assert dt.datetime.fromisoformat(done["due_at"]) == at(2026, 12, 14, 8)


@pytest.mark.parametrize(
    "repeat",
    [
        {"type": "once", "at": "2026-12-07T08:00:00+01:00"},
        {"type": "weekly", "days": ["someday"], "time": "08:00"},
        {"type": "daily"},
        "every monday",
    ],
)
def test_a_bad_rule_over_the_api_is_a_422_naming_the_field_and_changes_nothing(api, repeat):
    task = services.task_create(title="water plants", due_at=at(2026, 12, 7, 8))
    patched = api.patch(f"/api/tasks/{task.pk}", {"repeat": repeat, "title": "changed"})
    assert patched.status_code == 422, patched.content
    assert "repeat" in str(patched.json()["error"])
    created = api.post("/api/tasks", {"title": "another", "repeat": repeat})
    assert created.status_code == 422, created.content
    assert "repeat" in str(created.json()["error"])
    assert list(Task.objects.values_list("title", "repeat", "version")) == [
        ("water plants", None, 1)
    ]
