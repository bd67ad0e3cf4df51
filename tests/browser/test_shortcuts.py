"""Keyboard shortcuts (static/talorys/js/keys.js): `?` lists them in a
dialog that Esc closes, `q` adds a task from any page, Ctrl/Cmd+K focuses the search, `n` starts
a new chat, `[` and `]` move between conversations; none fires while the owner types in a
field (but Ctrl/Cmd+K)."""

from __future__ import annotations

import re

import pytest

from agent.models import Conversation
from talorys.workspace.models import Task

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]


def _away_from_fields(page) -> None:
    # The chat focuses its composer; a click on the page's heading leaves every field.
    page.evaluate("document.activeElement && document.activeElement.blur()")


def test_question_mark_opens_the_sheet_and_esc_closes_it(signed_in, live_server_url):
    from playwright.sync_api import expect

    page = signed_in
    page.goto(f"{live_server_url}/notes/")
    page.keyboard.press("?")
    sheet = page.get_by_role("dialog", name="Keyboard shortcuts")
    expect(sheet).to_be_visible()
    expect(sheet).to_contain_text("Quick add a task")
    expect(sheet).to_contain_text("Ctrl K")
    page.keyboard.press("Escape")
    expect(sheet).to_be_hidden()
    assert page.csp_violations == []


def test_q_adds_a_task_from_any_page(signed_in, live_server_url):
    from playwright.sync_api import expect

    page = signed_in
    page.goto(f"{live_server_url}/notes/")
    page.keyboard.press("q")
    dialog = page.get_by_role("dialog", name="Quick add a task")
    field = dialog.get_by_label("Task")
    expect(field).to_be_focused()
    field.fill("x" * 600)  # too long: the API refuses, what was typed stays
    field.press("Enter")
    expect(dialog.get_by_role("alert")).not_to_be_empty()
    expect(field).to_have_value("x" * 600)
    assert not Task.objects.exists()

    field.fill("Buy oat milk")
    field.press("Enter")
    expect(dialog).to_be_hidden()
    expect(page.locator(".toast", has_text="Task “Buy oat milk” added.")).to_be_visible()
    expect(page).to_have_url(f"{live_server_url}/notes/")  # never left the page
    assert Task.objects.filter(title="Buy oat milk", deleted_at=None).count() == 1

    page.goto(f"{live_server_url}/tasks/")  # the tasks page's own quick add
    page.get_by_label("Search").focus()
    _away_from_fields(page)
    page.keyboard.press("q")
    expect(page.get_by_label("New task")).to_be_focused()
    assert page.csp_violations == []


def test_ctrl_k_focuses_the_search_even_while_typing(signed_in, live_server_url):
    from playwright.sync_api import expect

    page = signed_in
    composer = page.get_by_label("Message")
    expect(composer).to_be_focused()
    composer.type("half a thought")
    page.keyboard.press("Control+k")
    expect(page.get_by_label("Search conversations")).to_be_focused()
    expect(composer).to_have_value("half a thought")

    page.goto(f"{live_server_url}/tasks/")
    page.keyboard.press("Control+k")
    expect(page.locator("#filter-q")).to_be_focused()

    page.goto(f"{live_server_url}/usage/")  # no search here: the conversations'
    page.keyboard.press("Meta+k")
    expect(page).to_have_url(f"{live_server_url}/")
    expect(page.get_by_label("Search conversations")).to_be_focused()


def test_shortcuts_are_ignored_while_typing(signed_in, live_server_url):
    from playwright.sync_api import expect

    page = signed_in
    composer = page.get_by_label("Message")
    expect(composer).to_be_focused()
    composer.type("what is q? [n]")
    expect(composer).to_have_value("what is q? [n]")
    expect(page.get_by_role("dialog")).to_have_count(0)

    page.goto(f"{live_server_url}/tasks/")
    page.get_by_label("Search").type("q?n")
    expect(page.get_by_label("Search")).to_have_value("q?n")
    expect(page.get_by_role("dialog")).to_have_count(0)
    expect(page).to_have_url(f"{live_server_url}/tasks/")


def test_n_and_the_brackets_move_between_conversations(signed_in, live_server_url):
    from playwright.sync_api import expect

    older = Conversation.objects.create(title="Garden plans")
    newer = Conversation.objects.create(title="Tax return")
    page = signed_in
    page.goto(f"{live_server_url}/c/{newer.pk}/")
    expect(page.get_by_role("heading", level=1)).to_have_text("Tax return")
    expect(page.locator("#conversation-list a")).to_have_text(["Tax return", "Garden plans"])
    _away_from_fields(page)
    page.keyboard.press("]")
    expect(page).to_have_url(f"{live_server_url}/c/{older.pk}/")
    expect(page.get_by_role("heading", level=1)).to_have_text("Garden plans")
    page.keyboard.press("Alt+ArrowUp")
    expect(page).to_have_url(f"{live_server_url}/c/{newer.pk}/")
    page.keyboard.press("[")  # the first already: it stays
    expect(page).to_have_url(f"{live_server_url}/c/{newer.pk}/")

    page.keyboard.press("n")
    expect(page).to_have_url(re.compile(r"/$"))
    expect(page.get_by_role("heading", level=1)).to_have_text("New chat")

    page.goto(f"{live_server_url}/notes/")
    page.keyboard.press("n")  # from another page: to the chat
    expect(page).to_have_url(f"{live_server_url}/")
    assert page.csp_violations == []


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_dialogs_and_the_undo_message_pass_axe(new_page, live_server_url, scheme):
    from playwright.sync_api import expect

    from tests.browser.conftest import log_in
    from tests.browser.test_accessibility import axe_source, violations

    Task.objects.create(title="Buy oat milk")
    source = axe_source()
    page = new_page()
    page.emulate_media(color_scheme=scheme)
    log_in(page, live_server_url)
    page.goto(f"{live_server_url}/tasks/")
    page.get_by_role("button", name="Delete “Buy oat milk”").click()
    expect(page.locator(".flash li.undoable")).to_be_visible()
    found = violations(page, source)
    _away_from_fields(page)
    page.keyboard.press("?")
    expect(page.get_by_role("dialog", name="Keyboard shortcuts")).to_be_visible()
    found += violations(page, source)
    page.keyboard.press("Escape")
    page.goto(f"{live_server_url}/notes/")
    page.keyboard.press("q")
    expect(page.get_by_role("dialog", name="Quick add a task")).to_be_visible()
    found += violations(page, source)
    assert found == []
