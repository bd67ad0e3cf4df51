"""Repeating tasks on the owner's pages (talorys/workspace/views/tasks.py): the task form's
Repeats field in words, the list's repeat mark, and completing a repeating task from the list,
which keeps it with its next date and offers an Undo that reverts the move."""

from __future__ import annotations

import datetime as dt
import re
from zoneinfo import ZoneInfo

import pytest
import time_machine

from talorys.owner.services.settings import owner_settings_update
from talorys.workspace import services
from talorys.workspace.models import Task
from tests.pages.test_quick_add import field, flash

PARIS = ZoneInfo("Europe/Paris")
NOW = dt.datetime(2026, 12, 3, 12, 0, tzinfo=PARIS)  # a Thursday
MONDAYS_8 = {"type": "weekly", "days": ["mon"], "time": "08:00"}

pytestmark = pytest.mark.django_db


@pytest.fixture
def signed_in(signed_in):
    owner_settings_update(time_zone="Europe/Paris")
    return signed_in


def test_the_form_sets_shows_and_stops_a_repeat_in_words(signed_in):
    task = services.task_create(title="Water plants")
    typed = {"repeat_words": "every monday 8am", "repeat_was": "", "version": task.version}
    with time_machine.travel(NOW, tick=False):
        signed_in.post(f"/tasks/{task.pk}/", typed)
    task.refresh_from_db()
    assert task.repeat == MONDAYS_8
    assert task.due_at == dt.datetime(2026, 12, 7, 8, tzinfo=PARIS)
    page = signed_in.get(f"/tasks/{task.pk}/")
    assert field(page, "repeat_words") == "Every Monday at 08:00"
    stop = {"repeat_words": "", "repeat_was": "Every Monday at 08:00", "version": task.version}
    signed_in.post(f"/tasks/{task.pk}/", stop)
    task.refresh_from_db()
    assert task.repeat is None


def test_a_save_that_leaves_the_repeat_alone_keeps_a_rule_words_cannot_say(signed_in):
    cron = {"type": "cron", "expression": "0 9 * * 1-5"}
    task = services.task_create(title="Standup", repeat=cron)
    shown = field(signed_in.get(f"/tasks/{task.pk}/"), "repeat_words")
    assert shown == "On cron 0 9 * * 1-5"
    typed = {"title": "Stand-up", "repeat_words": shown, "repeat_was": shown, "version": 1}
    signed_in.post(f"/tasks/{task.pk}/", typed)
    task.refresh_from_db()
    assert (task.title, task.repeat) == ("Stand-up", cron)


@pytest.mark.parametrize("words", ["whenever", "tomorrow 9am", "water plants every monday"])
def test_words_that_are_not_a_repeat_are_refused_and_change_nothing(signed_in, words):
    task = services.task_create(title="Water plants")
    typed = {"title": "Changed", "repeat_words": words, "repeat_was": "", "version": task.version}
    response = signed_in.post(f"/tasks/{task.pk}/", typed, follow=True)
    assert "Repeats: “" in flash(response)
    assert "is not a repeat we can read" in flash(response)
    task.refresh_from_db()
    assert (task.title, task.repeat, task.version) == ("Water plants", None, 1)


def test_the_list_marks_a_repeating_task(signed_in):
    services.task_create(title="Water plants", repeat=MONDAYS_8)
    services.task_create(title="Call Ana")
    page = signed_in.get("/tasks/").text
    marks = re.findall(r'<span class="repeats" title="([^"]*)">', page)
    assert marks == ["Every Monday at 08:00"]


def test_completing_from_the_list_keeps_it_with_its_next_date_and_undo_reverts(signed_in):
    task = services.task_create(
        title="Water plants", due_at=dt.datetime(2026, 12, 7, 8, tzinfo=PARIS), repeat=MONDAYS_8
    )
    with time_machine.travel(dt.datetime(2026, 12, 7, 9, tzinfo=PARIS), tick=False):
        response = signed_in.post(f"/tasks/{task.pk}/complete/", follow=True)
    task.refresh_from_db()
    assert (task.status, task.due_at) == ("open", dt.datetime(2026, 12, 14, 8, tzinfo=PARIS))
    assert "“Water plants” done; next due Mon 14 Dec, 08:00." in flash(response)
    undo = re.search(
        r'<form method="post" action="/changes/" class="inline undo">.*?name="change_id" '
        r'value="(\d+)"',
        response.text,
    )
    assert undo is not None
    signed_in.post("/changes/", {"change_id": undo.group(1), "next": "/tasks/"})
    task.refresh_from_db()
    assert (task.status, task.due_at) == ("open", dt.datetime(2026, 12, 7, 8, tzinfo=PARIS))


def test_completing_a_task_that_does_not_repeat_closes_it_as_before(signed_in):
    task = services.task_create(title="Call Ana")
    response = signed_in.post(f"/tasks/{task.pk}/complete/", follow=True)
    assert "“Call Ana” is done." in flash(response)
    assert Task.objects.get().status == "done"
