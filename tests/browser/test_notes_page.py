"""A note in a real browser: its Markdown rendered, hostile markup inert in the note, its
preview and its history, and an edit saved with its diff in the history."""

from __future__ import annotations

import httpx
import pytest

from tests.conftest import OWNER_PASSWORD

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]

HOSTILE = "<img src=x onerror=\"document.title='pwned'\">"


def make_note(url: str, content: str) -> int:
    with httpx.Client(base_url=url) as client:
        login = client.post(
            "/api/auth/login", json={"username": "owner", "password": OWNER_PASSWORD}
        )
        client.headers["X-CSRFToken"] = login.json()["csrf_token"]
        return client.post("/api/notes", json={"title": "Garden", "content": content}).json()["id"]


def test_a_note_renders_markdown_and_stored_markup_stays_inert(signed_in, live_server_url):
    from playwright.sync_api import expect

    page = signed_in
    note = make_note(live_server_url, f"## Bulbs\n\n**Plant** tulips.\n\n{HOSTILE}")
    page.goto(f"{live_server_url}/notes/{note}/")
    body = page.locator("#note-body")
    expect(body.locator("h2")).to_have_text("Bulbs")
    expect(body.locator("strong")).to_have_text("Plant")
    expect(body).to_contain_text("<img src=x")  # shown as text
    assert page.locator("img[onerror]").count() == 0
    assert page.locator("main img").count() == 0

    # The preview goes through the same renderer, and so stays inert too.
    page.locator("#note-content").fill(f"# Draft\n\n{HOSTILE}\n\n- one\n- two")
    page.get_by_role("button", name="Preview").click()
    preview = page.locator("#preview-body")
    expect(preview.locator("h1")).to_have_text("Draft")
    expect(preview.locator("li")).to_have_count(2)
    assert page.locator("main img").count() == 0

    # Saved, the edit shows in the history as a diff.
    page.get_by_role("button", name="Save").click()
    expect(page.locator("#note-body h1")).to_have_text("Draft")
    expect(page.locator("#revisions ins").first).to_be_visible()
    assert page.title() != "pwned"
    assert page.csp_violations == []


def test_the_owner_ticks_a_task_list_box_and_a_stale_tick_is_refused(signed_in, live_server_url):
    from playwright.sync_api import expect

    from talorys.workspace.models import Note
    from tests.browser.test_accessibility import axe_source, violations

    page = signed_in
    note = make_note(live_server_url, "Shopping\n\n- [ ] cheese\n- [x] milk")
    page.goto(f"{live_server_url}/notes/{note}/")
    cheese = page.get_by_role("checkbox", name="cheese")
    milk = page.get_by_role("checkbox", name="milk")
    expect(cheese).not_to_be_checked()
    expect(milk).to_be_checked()
    expect(cheese).to_be_enabled()  # rendered disabled; the note's own page enables them
    assert violations(page, axe_source()) == []

    cheese.check()
    expect(page.locator("#tick-status")).to_have_text("Ticked “cheese”.")
    stored = Note.objects.get(pk=note)
    assert (stored.content, stored.version) == ("Shopping\n\n- [x] cheese\n- [x] milk", 2)
    # The Edit form follows, so saving it next does not undo the tick; the history shows it.
    expect(page.locator("#note-content")).to_have_value(stored.content)
    expect(page.locator('#note-form input[name="version"]')).to_have_value("2")

    # The note changes elsewhere: a tick from this page would land on the old line numbers.
    with httpx.Client(base_url=live_server_url) as client:
        login = client.post(
            "/api/auth/login", json={"username": "owner", "password": OWNER_PASSWORD}
        )
        client.headers["X-CSRFToken"] = login.json()["csrf_token"]
        client.patch(f"/api/notes/{note}", json={"content": "- [ ] eggs\n" + stored.content})
    milk.uncheck()
    expect(page.locator("#tick-status")).to_contain_text(
        "Not saved: this note has changed since the page was opened"
    )
    expect(milk).to_be_checked()  # put back as it is stored
    assert Note.objects.get(pk=note).version == 3

    page.reload()
    expect(page.get_by_role("checkbox", name="eggs")).not_to_be_checked()
    expect(page.locator("#revisions .revision")).to_have_count(3)
    assert page.csp_violations == []


def test_a_task_list_box_sits_on_its_item_s_line(signed_in, live_server_url):
    """The box is a small square at the start of its item's one line (a form label's grid had
    put it on a full-width row of its own, above the text)."""
    from playwright.sync_api import expect

    note = make_note(live_server_url, "Shopping\n\n- [ ] cheese\n- [x] milk and bread")
    page = signed_in
    page.goto(f"{live_server_url}/notes/{note}/")
    cheese = page.get_by_role("checkbox", name="cheese")
    expect(cheese).to_be_visible()
    box = cheese.bounding_box()
    label = page.locator("#note-body li.task-item label").first.bounding_box()
    assert box["width"] < 30
    assert label["height"] < 2 * box["height"] + 10  # one line, not the box above the text
    assert label["x"] - 30 < box["x"] <= label["x"] + 5  # at the start of its item
