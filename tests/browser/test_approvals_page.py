"""/approvals/ in a real browser: a note rewrite waits with its diff; approve it, see "Done",
undo it, see "Undone"; the note's text in the database follows each step."""

from __future__ import annotations

import pytest

from approvals import services
from approvals.models import PendingAction
from talorys.lib.tools import ToolContext, get_tool
from talorys.workspace import services as workspace
from talorys.workspace.models import Note
from tests.browser.conftest import in_a_thread

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]


def test_owner_sees_the_rewrite_diff_approves_and_undoes(live_server_url, request):
    from playwright.sync_api import expect

    def propose() -> tuple[Note, PendingAction]:
        note = workspace.note_create(title="Packing", content="socks and shoes")
        tool = get_tool("rewrite_note")
        ctx = ToolContext(mode="chat")
        # The proposal a turn would make, stored in the database the live daphne reads.
        proposal = tool.prepare(tool.args(note_id=note.pk, content="socks and boots"), ctx)
        return note, services.pending_action_propose(tool=tool, proposal=proposal, ctx=ctx)

    # In a thread: the proposal's notification is broadcast on commit through async_to_sync.
    note, action = in_a_thread(propose)
    page = request.getfixturevalue("signed_in")

    page.goto(f"{live_server_url}/approvals/")
    card = page.locator(f"#approval-{action.pk}")
    expect(card).to_contain_text("Waiting for you")
    expect(card.locator(".diff del")).to_have_text("shoes")
    expect(card.locator(".diff ins")).to_have_text("boots")
    expect(card).to_contain_text("minutes left")
    assert Note.objects.get(pk=note.pk).content == "socks and shoes"

    card.get_by_role("button", name="Approve").click()
    expect(page.locator(".flash")).to_contain_text("Done: Rewrite the note")
    assert Note.objects.get(pk=note.pk).content == "socks and boots"

    page.get_by_role("link", name="Decided").click()
    card = page.locator(f"#approval-{action.pk}")
    expect(card.locator(".state")).to_have_text("Done")
    expect(card.locator(".diff ins")).to_have_text("boots")
    card.get_by_role("button", name="Undo").click()

    card = page.locator(f"#approval-{action.pk}")
    expect(card.locator(".state")).to_have_text("Undone")
    expect(card.get_by_role("button", name="Undo")).to_have_count(0)
    assert Note.objects.get(pk=note.pk).content == "socks and shoes"
    assert page.csp_violations == []
