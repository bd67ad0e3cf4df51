"""The demo model adds tasks and reminders in the owner's words through the real tools: "add buy
milk tomorrow 9am" is a task due then in the owner's zone, "remind me every monday to water
plants" a reminder routine (talorys/providers/demo/dates.py, talorys/lib/when.py)."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

from django.utils import timezone

from automations.models import Automation
from talorys.owner.services.settings import owner_settings_update
from talorys.workspace.models import Task
from tests.agent.test_runner import TURN_DATABASE, kinds, streamed_text, turn

pytestmark = TURN_DATABASE
TOKYO = ZoneInfo("Asia/Tokyo")


def test_the_demo_adds_a_task_due_when_the_owner_said(db):
    owner_settings_update(time_zone="Asia/Tokyo")
    result = turn(text="add buy milk tomorrow 9am")
    assert kinds(result)[-1] == "done"
    task = Task.objects.get()
    day = timezone.localtime(timezone.now(), TOKYO).date() + dt.timedelta(days=1)
    assert task.title == "Buy milk"
    assert task.due_at == dt.datetime.combine(day, dt.time(9), tzinfo=TOKYO)
    assert "Added the task “Buy milk”, due" in streamed_text(result)


def test_the_demo_makes_a_reminder_routine_for_a_repeating_phrase(db):
    owner_settings_update(time_zone="Europe/Paris")
    result = turn(text="remind me every monday to water plants")
    assert kinds(result)[-1] == "done"
    assert not Task.objects.exists()
    routine = Automation.objects.get()
    assert (routine.kind, routine.name) == ("reminder", "Water plants")
    assert routine.schedule == {"type": "weekly", "days": ["mon"], "time": "09:00"}
    assert "every Monday at 09:00" in streamed_text(result)
