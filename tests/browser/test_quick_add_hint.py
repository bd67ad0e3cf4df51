"""Quick add in a real browser says what it reads before adding (static/talorys/js/quick-add.js):
the hint under the field, then Enter adds the task due then; a repeating phrase says it adds a
repeating task; and "I may call Sam" shows no hint. The `q` dialog (static/talorys/js/keys.js)
reads dates the same way, through POST /api/tasks/quick."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest
from django.utils import timezone

from talorys.lib.when import understand
from talorys.owner.services.settings import owner_settings_update
from talorys.workspace.models import Task
from tests.browser.conftest import log_in

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]
PARIS = ZoneInfo("Europe/Paris")


def paris_owner(page, url: str):
    """Signed in with the zone chosen first: the first run then leaves it alone (first-run.js
    would otherwise set the browser's zone, racing the test)."""
    owner_settings_update(time_zone="Europe/Paris")
    log_in(page, url)
    return page


def test_the_hint_shows_what_quick_add_reads_and_enter_adds_it(page, live_server_url):
    from playwright.sync_api import expect

    paris_owner(page, live_server_url)
    page.goto(f"{live_server_url}/tasks/")
    title = page.get_by_label("New task")
    hint = page.locator("#new-title-hint")

    title.fill("I may call Sam")
    page.wait_for_timeout(600)  # past the hint's wait: still nothing read
    expect(hint).to_be_hidden()

    title.fill("water plants every monday")
    expect(hint).to_have_text("Every Monday at 09:00 · adds “water plants”, repeating")

    title.fill("buy milk tomorrow 9am")
    day = timezone.localtime(timezone.now(), PARIS).date() + dt.timedelta(days=1)
    due = dt.datetime.combine(day, dt.time(9), tzinfo=PARIS)
    said = f"Due {due:%a} {due.day} {due:%b}, 09:00"
    expect(hint).to_have_text(f"{said} · adds “buy milk”")
    expect(page.get_by_label("Keep the words as typed")).to_be_visible()
    title.press("Enter")

    expect(page.locator(".flash")).to_contain_text(f"Task “buy milk” added, due {said[4:]}.")
    expect(page.locator("#task-list li", has_text="buy milk")).to_be_visible()
    task = Task.objects.get()
    assert (task.title, task.due_at) == ("buy milk", due)
    expect(title).to_have_value("")
    assert page.csp_violations == []


def test_the_q_dialog_reads_the_date_and_says_it_before_adding(page, live_server_url):
    from playwright.sync_api import expect

    paris_owner(page, live_server_url)
    page.goto(f"{live_server_url}/notes/")
    page.keyboard.press("q")
    dialog = page.get_by_role("dialog", name="Quick add a task")
    text = dialog.get_by_label("Task")
    hint = dialog.locator("#quick-task-hint")

    text.fill("friday 5pm")  # only a date: said before, refused when added
    expect(hint).to_contain_text("Only a date (Due Fri ")
    text.press("Enter")
    expect(dialog.get_by_role("alert")).to_contain_text("“friday 5pm” is only a date")
    assert not Task.objects.exists()

    text.fill("water plants every monday")  # a repeating task
    expect(hint).to_have_text("Every Monday at 09:00 · adds “water plants”, repeating")

    # Enter before the hint caught up (typed and sent in one go): it shows what it read first.
    page.evaluate(
        """() => {
            const field = document.getElementById("quick-task-text");
            field.value = "call Ana tomorrow 9am";
            field.dispatchEvent(new Event("input"));
            field.form.requestSubmit();
        }"""
    )
    expect(hint).to_contain_text("· adds “call Ana”")
    expect(dialog).to_be_visible()
    assert not Task.objects.exists()

    text.fill("pick up parcel friday 5pm")
    got = understand("pick up parcel friday 5pm", zone=PARIS)
    assert got.due is not None
    expect(hint).to_have_text(f"{got.said} · adds “pick up parcel”")
    text.press("Enter")
    expect(dialog).to_be_hidden()
    toast = f"Task “pick up parcel” added, due {got.said[4:]}."
    expect(page.locator(".toast", has_text=toast)).to_be_visible()
    task = Task.objects.get()
    assert (task.title, task.due_at) == ("pick up parcel", got.due)
    assert page.csp_violations == []


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_hints_pass_the_axe_scan(page, live_server_url, scheme):
    """The shown hint and the Keep the words as typed box on /tasks/, and the task form's Due
    in words hint, scanned as test_accessibility scans every page."""
    from playwright.sync_api import expect

    from tests.browser.test_accessibility import axe_source, violations

    paris_owner(page, live_server_url)
    task = Task.objects.create(title="Call Ana")
    page.emulate_media(color_scheme=scheme)
    page.goto(f"{live_server_url}/tasks/")
    page.get_by_label("New task").fill("buy milk tomorrow 9am")
    expect(page.locator("#new-title-hint")).to_contain_text("adds “buy milk”")
    assert violations(page, axe_source()) == []

    page.goto(f"{live_server_url}/tasks/{task.pk}/")
    page.get_by_label("Due in words").fill("friday 5pm")
    expect(page.locator("#task-due-hint")).to_contain_text("17:00")
    assert violations(page, axe_source()) == []
    page.get_by_role("button", name="Save").click()
    expect(page.locator(".flash")).to_contain_text("Task saved.")
    task.refresh_from_db()
    assert task.due_at is not None
    assert task.due_at.astimezone(PARIS).strftime("%a %H:%M") == "Fri 17:00"
    assert page.csp_violations == []
