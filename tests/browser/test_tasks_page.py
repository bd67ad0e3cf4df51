"""/tasks/ in a real browser: add a task with Enter, complete it, delete it, restore it from
/bin/; and the phone viewport has no horizontal scroll."""

from __future__ import annotations

import re

import pytest

from talorys.workspace.models import Project, Task

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]


def test_add_complete_delete_and_restore_a_task(signed_in, live_server_url):
    from playwright.sync_api import expect

    page = signed_in
    page.goto(f"{live_server_url}/tasks/")
    title = page.get_by_label("New task")
    expect(title).to_be_focused()
    title.fill("Buy oat milk")
    title.press("Enter")
    row = page.locator("#task-list li", has_text="Buy oat milk")
    expect(row).to_be_visible()
    expect(page.locator(".flash")).to_contain_text("Task “Buy oat milk” added.")
    task = Task.objects.get(title="Buy oat milk")

    row.get_by_role("button", name="Complete").click()
    expect(page.locator(".flash")).to_contain_text("is done")
    expect(page.locator("#task-list li", has_text="Buy oat milk")).to_have_count(0)  # open only
    page.get_by_label("Show").select_option("all")
    page.get_by_role("button", name="Filter").click()
    done_row = page.locator("#task-list li", has_text="Buy oat milk")
    expect(done_row.get_by_role("button", name="Reopen")).to_be_visible()

    done_row.get_by_role("button", name="Delete").click()
    expect(page.locator(".flash")).to_contain_text("moved to the bin")
    expect(page.locator("#task-list li", has_text="Buy oat milk")).to_have_count(0)
    page.locator(".flash").get_by_role("link", name="Open the bin").click()
    expect(page).to_have_url(re.compile(r"/bin/$"))

    page.get_by_role("button", name=re.compile("Restore task “Buy oat milk”")).click()
    expect(page.locator(".flash")).to_be_visible()
    expect(
        page.get_by_role("button", name=re.compile("Restore task “Buy oat milk”"))
    ).to_have_count(0)
    page.goto(f"{live_server_url}/tasks/?status=all")
    expect(page.locator("#task-list li", has_text="Buy oat milk")).to_be_visible()
    task.refresh_from_db()
    assert task.deleted_at is None and task.status == "done"
    assert page.csp_violations == []


def test_the_phone_has_no_horizontal_scroll(signed_in_phone, live_server_url):
    from playwright.sync_api import expect

    project = Project.objects.create(name="A project with a rather long name indeed")
    Task.objects.create(
        title="Averyveryverylongwordwithoutanyspacesthatwouldotherwisespilloutofitsrow " * 2,
        project=project,
    )
    page = signed_in_phone
    page.goto(f"{live_server_url}/tasks/")
    expect(page.locator("#task-list li")).to_have_count(1)
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    assert page.csp_violations == []
