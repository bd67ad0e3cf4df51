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
