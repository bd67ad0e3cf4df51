"""Undo where the action happens : a delete on the page that made it says
"moved to the bin" with an Undo that restores the item from the bin, for the server-rendered
forms (tasks, notes, memories) and the chat's conversations; deleting the open conversation
leaves its URL for the new chat's, in place."""

from __future__ import annotations

import re

import pytest

from agent.models import Conversation, Message
from memory import services as memory_services
from memory.models import Memory
from talorys.workspace.models import Note, Task
from talorys.workspace.services import note_create

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]


def test_a_deleted_task_comes_back_with_undo(signed_in, live_server_url):
    from playwright.sync_api import expect

    task = Task.objects.create(title="Buy oat milk")
    page = signed_in
    page.goto(f"{live_server_url}/tasks/")
    page.locator("#task-list li", has_text="Buy oat milk").get_by_role(
        "button", name="Delete"
    ).click()
    flash = page.locator(".flash li.undoable")
    expect(flash).to_contain_text("moved to the bin")
    expect(page.locator("#task-list li", has_text="Buy oat milk")).to_have_count(0)
    task.refresh_from_db()
    assert task.deleted_at is not None

    flash.get_by_role("button", name="Undo").click()
    expect(page).to_have_url(f"{live_server_url}/tasks/")  # back where it happened
    expect(page.locator(".flash")).to_contain_text("back where it was")
    expect(page.locator("#task-list li", has_text="Buy oat milk")).to_be_visible()
    task.refresh_from_db()
    assert task.deleted_at is None
    assert page.csp_violations == []


def test_the_undo_message_goes_after_a_few_seconds(signed_in, live_server_url):
    from playwright.sync_api import expect

    Task.objects.create(title="Water the plants")
    page = signed_in
    page.goto(f"{live_server_url}/tasks/")
    page.get_by_role("button", name="Delete “Water the plants”").click()
    flash = page.locator(".flash li.undoable")
    expect(flash).to_be_visible()
    page.mouse.move(0, 0)  # not hovering it
    expect(flash).to_have_count(0, timeout=15_000)


def test_a_deleted_note_and_memory_come_back_with_undo(signed_in, live_server_url):
    from playwright.sync_api import expect

    note = note_create(title="Garden", content="Tulips")
    memory = memory_services.memory_create_unchecked(text="Sister Ana lives in Porto")
    page = signed_in

    page.goto(f"{live_server_url}/notes/{note.pk}/")
    page.get_by_role("button", name="Delete this note").click()
    expect(page).to_have_url(f"{live_server_url}/notes/")
    page.locator(".flash li.undoable").get_by_role("button", name="Undo").click()
    expect(page.locator(".flash")).to_contain_text("back where it was")
    note.refresh_from_db()
    assert note.deleted_at is None

    page.goto(f"{live_server_url}/memories/{memory.pk}/")
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Delete (to the bin)").click()
    flash = page.locator(".flash li.undoable")
    expect(flash).to_contain_text("Memory moved to the bin.")
    assert Memory.objects.get(pk=memory.pk).deleted_at is not None
    flash.get_by_role("button", name="Undo").click()
    expect(page.locator(".flash")).to_contain_text("back where it was")
    assert Memory.objects.get(pk=memory.pk).deleted_at is None
    assert Note.objects.filter(pk=note.pk, deleted_at=None).exists()
    assert page.csp_violations == []


def test_an_undo_that_cannot_restore_says_why_and_changes_nothing(signed_in, live_server_url):
    from playwright.sync_api import expect

    task = Task.objects.create(title="Call the plumber")
    page = signed_in
    page.goto(f"{live_server_url}/tasks/")
    page.get_by_role("button", name="Delete “Call the plumber”").click()
    undo = page.locator(".flash li.undoable").get_by_role("button", name="Undo")
    expect(undo).to_be_visible()
    Task.objects.filter(pk=task.pk).delete()  # purged meanwhile (another tab emptied the bin)
    undo.click()
    expect(page.locator(".flash-errors .error")).to_be_visible()
    assert not Task.objects.filter(pk=task.pk).exists()


def test_deleting_the_open_conversation_leaves_its_url_and_undo_brings_it_back(
    signed_in, live_server_url
):
    from playwright.sync_api import expect

    convo = Conversation.objects.create(title="Garden plans")
    Message.objects.create(conversation=convo, role="user", content="tulips or roses?")
    page = signed_in
    page.goto(f"{live_server_url}/c/{convo.pk}/")
    expect(page.get_by_role("heading", level=1)).to_have_text("Garden plans")
    depth = page.evaluate("history.length")

    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Delete").click()
    expect(page).to_have_url(f"{live_server_url}/")
    expect(page.get_by_role("heading", level=1)).to_have_text("New chat")
    assert page.evaluate("history.length") == depth  # replaced: Back does not reopen it
    toast = page.locator(".toast.undo-toast")
    # A whole sentence and the button, no dash left hanging at the end of the line.
    expect(toast.locator("span")).to_have_text("Conversation moved to the bin.")
    assert "—" not in toast.inner_text()
    # At the thread's top, clear of the composer (and the last message above it).
    composer = page.locator("#composer").bounding_box()
    where = toast.bounding_box()
    assert where["y"] + where["height"] < composer["y"]
    assert where["y"] <= page.locator("#scroller").bounding_box()["y"] + 20
    convo.refresh_from_db()
    assert convo.deleted_at is not None

    toast.get_by_role("button", name="Undo").click()
    expect(toast).to_have_count(0)
    expect(page).to_have_url(re.compile(rf"/c/{convo.pk}/$"))
    expect(page.locator("#conversation-list a", has_text="Garden plans")).to_be_visible()
    convo.refresh_from_db()
    assert convo.deleted_at is None
    assert page.csp_violations == []
