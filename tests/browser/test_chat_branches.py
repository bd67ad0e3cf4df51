"""Branches in the chat page (agent/branches.py): the owner edits an earlier message, the thread
goes on from the edit, "‹ 2/2 ›" on it leads back to the old branch and forth again, and the
branch shown is the one a reload shows. The page with the arrows passes axe, light and dark."""

from __future__ import annotations

import re

import pytest

from tests.agent.fake_openai import text
from tests.browser.test_accessibility import axe_source, violations
from tests.browser.test_chat_page import say, use_fake_model

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]


def test_editing_an_earlier_message_starts_a_branch_and_the_old_one_is_reachable(
    signed_in, fake_openai
):
    from playwright.sync_api import expect

    use_fake_model(fake_openai)
    fake_openai.script(text("Banana."), text("Cherry."), text("Leek."))
    page = signed_in
    page.reload()
    say(page, "name a fruit")
    bodies = page.locator(".msg .body")
    expect(bodies).to_have_text(["name a fruit", "Banana."])
    say(page, "a red one")
    expect(bodies).to_have_text(["name a fruit", "Banana.", "a red one", "Cherry."])

    # Edit the first message, not the last.
    first = page.locator(".msg.user").first
    first.get_by_role("button", name="Edit").click()
    editor = page.get_by_label("Edit your message")
    expect(editor).to_have_value("name a fruit")
    editor.fill("name a vegetable")
    page.get_by_role("button", name="Save & resend").click()
    expect(bodies).to_have_text(["name a vegetable", "Leek."])
    assert fake_openai.requests[-1]["messages"][1:] == [
        {"role": "user", "content": "name a vegetable"}
    ]
    versions = page.get_by_role("group", name="Versions of what you wrote")
    expect(versions).to_contain_text("2/2")
    expect(versions.get_by_role("button", name="Next version")).to_be_disabled()

    # Back to the old branch, whole; the arrow keeps the focus.
    versions.get_by_role("button", name="Previous version").click()
    expect(bodies).to_have_text(["name a fruit", "Banana.", "a red one", "Cherry."])
    expect(versions).to_contain_text("1/2")
    expect(versions.get_by_role("button", name="Next version")).to_be_focused()
    page.reload()  # the server keeps the branch shown
    expect(bodies).to_have_text(["name a fruit", "Banana.", "a red one", "Cherry."])

    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        page.wait_for_timeout(100)
        assert violations(page, axe_source()) == []

    versions.get_by_role("button", name="Next version").click()
    expect(bodies).to_have_text(["name a vegetable", "Leek."])
    expect(page).to_have_url(re.compile(r"/c/\d+/$"))
    assert page.csp_violations == []
