"""/approvals/: what waits (with the rewrite's diff and the time left), what was decided (with
Undo while it can be), and the audit trail; the API's card carries the same diff."""

from __future__ import annotations

import datetime as dt

import pytest
import time_machine
from django.utils import timezone

from approvals import services
from approvals.models import ApprovalEvent, PendingAction
from talorys.lib.tools import ToolContext, get_tool
from talorys.workspace import services as workspace
from talorys.workspace.models import Note


def propose_rewrite(note: Note, content: str) -> PendingAction:
    tool = get_tool("rewrite_note")
    assert tool is not None
    ctx = ToolContext(mode="chat", conversation_id=None)
    proposal = tool.prepare(tool.args(note_id=note.pk, content=content), ctx)
    return services.pending_action_propose(tool=tool, proposal=proposal, ctx=ctx)


@pytest.fixture
def note(db):
    return workspace.note_create(title="Packing", content="socks and shoes")


def test_waiting_shows_the_rewrite_diff_and_the_time_left(signed_in, note):
    propose_rewrite(note, "socks and boots")

    html = signed_in.get("/approvals/").content.decode()

    assert "Rewrite the note “Packing”" in html and "Waiting for you" in html
    assert "<del>shoes</del>" in html and "<ins>boots</ins>" in html
    assert "29\xa0minutes left" in html or "30\xa0minutes left" in html


def test_the_api_card_carries_the_diff_and_a_deletion_has_none(api, note):
    action = propose_rewrite(note, "socks and boots")
    task = workspace.task_create(title="Call the bank")
    tool = get_tool("delete_task")
    proposal = tool.prepare(tool.args(task_id=task.pk), ToolContext())
    deletion = services.pending_action_propose(tool=tool, proposal=proposal, ctx=ToolContext())

    card = api.get(f"/api/approvals/{action.pk}").json()
    assert card["diff"] == [
        {"op": "eq", "text": "socks and "},
        {"op": "del", "text": "shoes"},
        {"op": "ins", "text": "boots"},
    ]
    assert api.get(f"/api/approvals/{deletion.pk}").json()["diff"] == []
    listed = {item["id"]: item["diff"] for item in api.get("/api/approvals").json()["items"]}
    assert listed == {action.pk: card["diff"], deletion.pk: []}
    # Once committed the diff is what the commit replaced, not the note's new text against itself.
    assert api.post(f"/api/approvals/{action.pk}/approve").json()["diff"] == card["diff"]


def test_approve_then_undo_from_the_page(signed_in, note):
    action = propose_rewrite(note, "socks and boots")

    response = signed_in.post(f"/approvals/{action.pk}/approve/", follow=True)
    assert "Done: Rewrite the note" in response.content.decode()
    assert Note.objects.get(pk=note.pk).content == "socks and boots"

    decided = signed_in.get("/approvals/?show=decided").content.decode()
    assert ">Done<" in decided and ">Undo</button>" in decided
    assert "<del>shoes</del>" in decided

    signed_in.post(f"/approvals/{action.pk}/undo/")
    assert Note.objects.get(pk=note.pk).content == "socks and shoes"
    decided = signed_in.get("/approvals/?show=decided").content.decode()
    assert ">Undone<" in decided and ">Undo</button>" not in decided


def test_reject_commits_nothing_and_a_second_decision_is_refused(signed_in, note):
    action = propose_rewrite(note, "socks and boots")
    signed_in.post(f"/approvals/{action.pk}/reject/")

    response = signed_in.post(f"/approvals/{action.pk}/approve/", follow=True)

    assert "This approval was already decided: rejected." in response.content.decode()
    assert Note.objects.get(pk=note.pk).content == "socks and shoes"
    assert PendingAction.objects.get(pk=action.pk).status == "rejected"
    assert ApprovalEvent.objects.filter(action_ref=action.pk, kind="committed").count() == 0


def test_a_stale_target_fails_with_its_reason(signed_in, note):
    action = propose_rewrite(note, "socks and boots")
    workspace.note_append(note_id=note.pk, text="hat")

    response = signed_in.post(f"/approvals/{action.pk}/approve/", follow=True)

    assert "Failed: This item changed after it was proposed" in response.content.decode()
    assert Note.objects.get(pk=note.pk).content == "socks and shoes\n\nhat"
    decided = signed_in.get("/approvals/?show=decided").content.decode()
    assert "Failed: This item changed" in decided


def test_an_expired_approval_shows_as_expired_and_cannot_be_approved(signed_in, note):
    action = propose_rewrite(note, "socks and boots")
    with time_machine.travel(timezone.now() + dt.timedelta(minutes=31)):
        assert "Nothing is waiting for you." in signed_in.get("/approvals/").content.decode()
        assert ">Expired<" in signed_in.get("/approvals/?show=decided").content.decode()
        response = signed_in.post(f"/approvals/{action.pk}/approve/", follow=True)
    assert "This approval expired" in response.content.decode()
    assert Note.objects.get(pk=note.pk).content == "socks and shoes"


def test_unknown_approval_is_a_clear_message(signed_in, db):
    response = signed_in.post("/approvals/999999/approve/", follow=True)
    assert "Approval 999999 does not exist." in response.content.decode()
    response = signed_in.post("/approvals/999999/undo/", follow=True)
    assert "Approval 999999 does not exist." in response.content.decode()


def test_the_audit_trail_lists_every_event(signed_in, note):
    action = propose_rewrite(note, "socks and boots")
    signed_in.post(f"/approvals/{action.pk}/reject/")

    html = signed_in.get("/approvals/?show=audit").content.decode()

    assert "Proposed" in html and "Rejected" in html and "owner:owner" in html


def test_the_page_needs_the_owner(client, db):
    assert client.get("/approvals/").status_code == 302


def test_pages_read_a_fixed_number_of_queries_with_many_approvals(
    signed_in, note, django_assert_max_num_queries
):
    later = timezone.now() + dt.timedelta(minutes=30)
    statuses = PendingAction.Status.values
    actions = PendingAction.objects.bulk_create(
        [
            PendingAction(
                tool="rewrite_note" if n % 2 else "delete_task",
                # One waiting action per tool and target: each waiting one has its own target.
                target_id=note.pk + (n if n % len(statuses) == 0 else 0),
                snapshot="x",
                payload={"content": f"socks {n}"} if n % 2 else {},
                summary=f"action {n}",
                status=statuses[n % len(statuses)],
                expires_at=later,
                decided_at=None if n % len(statuses) == 0 else timezone.now(),
            )
            for n in range(2000)
        ]
    )
    ApprovalEvent.objects.bulk_create(
        [
            ApprovalEvent(
                action=a, action_ref=a.pk, tool=a.tool, target_id=1, summary="s", kind="proposed"
            )
            for a in actions
        ]
    )
    signed_in.get("/approvals/")  # the owner's settings row is made on the first page
    for path in ("/approvals/", "/approvals/?show=decided", "/approvals/?show=audit"):
        # The session, the owner, their settings; the expiry sweep (3); the count and the page.
        with django_assert_max_num_queries(8):
            assert signed_in.get(path).status_code == 200


def test_a_card_says_what_it_would_do_in_words_not_a_tool_and_an_id(signed_in):
    task = workspace.task_create(title="Book the dentist")
    tool = get_tool("delete_task")
    assert tool is not None
    ctx = ToolContext(mode="chat", conversation_id=None)
    proposal = tool.prepare(tool.args(task_id=task.pk), ctx)
    services.pending_action_propose(tool=tool, proposal=proposal, ctx=ctx)

    page = signed_in.get("/approvals/").content.decode()

    assert "Delete the task “Book the dentist”" in page
    assert "delete_task" not in page and f"target #{task.pk}" not in page
