"""Completing a repeating task in a real browser (talorys/workspace/views/tasks.py): the task
stays in the list, open, with its next date shown, and the message's Undo puts the date back."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest

from talorys.lib.schedules import next_after, repeat_parse
from talorys.owner.services.settings import owner_settings_update
from talorys.workspace import services
from talorys.workspace.models import Task
from tests.browser.conftest import log_in

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]
PARIS = ZoneInfo("Europe/Paris")


def test_completing_a_repeating_task_keeps_it_with_the_next_date(page, live_server_url):
    from playwright.sync_api import expect

    owner_settings_update(time_zone="Europe/Paris")
    # Due yesterday at 08:00, every day at 08:00: next due at the first 08:00 from now.
    today = dt.datetime.now(PARIS).date()
    due = dt.datetime.combine(today - dt.timedelta(days=1), dt.time(8), tzinfo=PARIS)
    daily = {"type": "daily", "time": "08:00"}
    task = services.task_create(title="Stretch", due_at=due, repeat=daily)
    log_in(page, live_server_url)
    page.goto(f"{live_server_url}/tasks/")
    row = page.locator("#task-list li", has_text="Stretch")
    expect(row.locator(".repeats")).to_have_attribute("title", "Every day at 08:00")
    expect(row.locator(".overdue")).to_be_visible()

    row.get_by_role("button", name="Complete “Stretch”").click()

    following = next_after(repeat_parse(daily), dt.datetime.now(dt.UTC), PARIS)
    assert following is not None
    following = following.astimezone(PARIS)
    shown = f"{following:%a} {following.day} {following:%b}, 08:00"
    expect(page.locator(".flash")).to_contain_text(f"“Stretch” done; next due {shown}.")
    expect(row).to_be_visible()
    expect(row.get_by_role("button", name="Complete “Stretch”")).to_be_visible()
    expect(row.locator(".overdue")).to_have_count(0)
    # Its own time, not the words: within the hour the page says "in 55 min".
    expect(row.locator(".due time")).to_have_attribute(
        "datetime", following.isoformat(timespec="seconds")
    )
    task.refresh_from_db()
    assert (task.status, task.due_at) == (Task.Status.OPEN, following)

    page.locator(".flash").get_by_role("button", name="Undo").click()
    expect(page.locator(".flash")).to_contain_text("Reverted.")
    expect(row.locator(".overdue")).to_be_visible()
    task.refresh_from_db()
    assert (task.status, task.due_at) == (Task.Status.OPEN, due)
