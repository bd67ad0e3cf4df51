"""The chat page in a real browser (Debian's Chromium through Playwright) against live daphne:
log in, add a task with the demo model, get an approval card, approve it, undo it."""

from __future__ import annotations

import re

import httpx
import pytest

from tests.conftest import OWNER_PASSWORD

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]


def tasks_via_api(url: str) -> list[dict]:
    with httpx.Client(base_url=url) as client:
        login = client.post(
            "/api/auth/login", json={"username": "owner", "password": OWNER_PASSWORD}
        )
        return client.get("/api/tasks", headers={"X-CSRFToken": login.json()["csrf_token"]}).json()[
            "items"
        ]


def test_owner_chats_with_the_demo_model_and_approves_a_deletion(page, live_server_url):
    from playwright.sync_api import expect

    page.goto(f"{live_server_url}/")
    expect(page).to_have_url(re.compile(r"/login/"))
    page.get_by_label("Username").fill("owner")
    page.get_by_label("Password").fill(OWNER_PASSWORD)
    page.get_by_role("button", name="Log in").click()

    expect(page.locator("#demo-banner")).to_be_visible()
    page.locator("#text").fill("add a task to buy oat milk")
    page.get_by_role("button", name="Send").click()
    reply = page.locator(".msg.assistant").last
    expect(reply).to_contain_text("Buy oat milk")
    expect(page.locator("#conversation-list li")).to_have_count(1)
    assert [t["title"] for t in tasks_via_api(live_server_url)] == ["Buy oat milk"]

    page.locator("#text").fill("delete the task buy oat milk")
    page.get_by_role("button", name="Send").click()
    card = page.locator(".approval").last
    expect(card).to_contain_text("Delete the task")
    assert len(tasks_via_api(live_server_url)) == 1  # nothing happens before approval

    card.get_by_role("button", name="Approve").click()
    expect(card).to_contain_text("committed")
    assert tasks_via_api(live_server_url) == []

    card.get_by_role("button", name="Undo").click()
    expect(card).to_contain_text("undone")
    assert [t["title"] for t in tasks_via_api(live_server_url)] == ["Buy oat milk"]
    assert page.csp_violations == []


def test_model_text_is_shown_as_text_not_html(page, live_server_url):
    from playwright.sync_api import expect

    page.goto(f"{live_server_url}/login/")
    page.get_by_label("Username").fill("owner")
    page.get_by_label("Password").fill(OWNER_PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.locator("#text").fill('add a task to <img src=x onerror="document.title=1">')
    page.get_by_role("button", name="Send").click()
    expect(page.locator(".msg.assistant").last).to_contain_text("<img src=x")
    assert page.locator(".msg img").count() == 0
    assert page.title() != "1"


def test_a_reopened_conversation_shows_decided_approvals_without_buttons(page, live_server_url):
    from playwright.sync_api import expect

    page.goto(f"{live_server_url}/login/")
    page.get_by_label("Username").fill("owner")
    page.get_by_label("Password").fill(OWNER_PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.locator("#text").fill("add a task to file taxes")
    page.get_by_role("button", name="Send").click()
    expect(page.locator(".msg.assistant").last).to_contain_text("File taxes")
    page.locator("#text").fill("delete the task file taxes")
    page.get_by_role("button", name="Send").click()
    card = page.locator(".approval").last
    card.get_by_role("button", name="Reject").click()
    expect(card).to_contain_text("rejected")

    page.reload()
    page.locator("#conversation-list a").first.click()
    reopened = page.locator(".approval").last
    expect(reopened).to_contain_text("rejected")
    expect(reopened.get_by_role("button")).to_have_count(0)
