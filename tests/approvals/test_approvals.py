"""Destructive model actions: proposed during a turn, committed once after the owner approves,
refused when rejected, expired, stale or vanished, and undoable for 30 days."""

from __future__ import annotations

import datetime as dt

import pytest
import time_machine
from django.utils import timezone

from agent.executor import ToolExecutor
from approvals import services as approvals
from approvals.models import ApprovalEvent, PendingAction
from talorys.history.bin import bin_purge_expired
from talorys.lib.tools import Permission, ToolContext, all_tools
from talorys.providers.base import ToolCall
from talorys.workspace import services
from talorys.workspace.models import Note, Project, Task


def propose(name: str, mode: str = "chat", **args):
    executor = ToolExecutor(ctx=ToolContext(mode=mode, conversation_id=None), max_tool_calls=10)
    return executor.execute(ToolCall(id="call-1", name=name, arguments=args, raw_arguments=""))


@pytest.fixture
def task(db):
    return services.task_create(title="Call the bank")


def test_delete_is_only_proposed_during_the_turn(task):
    outcome = propose("delete_task", task_id=task.pk)

    assert outcome.ok
    assert outcome.result["status"] == "awaiting_owner_approval"
    assert outcome.activity["status"] == "awaiting_approval"
    action = PendingAction.objects.get(pk=outcome.result["action_id"])
    assert action.status == "pending"
    assert action.summary == "Delete the task “Call the bank”"
    assert Task.objects.live().filter(pk=task.pk).exists()


@pytest.mark.parametrize(
    ("tool", "make", "arg"),
    [
        ("delete_task", lambda: services.task_create(title="t"), "task_id"),
        ("delete_note", lambda: services.note_create(title="n", content="c"), "note_id"),
        ("delete_project", lambda: services.project_create(name="p"), "project_id"),
        ("rewrite_note", lambda: services.note_create(title="n", content="old"), "note_id"),
    ],
)
def test_every_destructive_tool_proposes_and_changes_nothing(db, tool, make, arg):
    obj = make()
    before = {f.name: getattr(obj, f.name) for f in obj._meta.fields}
    extra = {"content": "new"} if tool == "rewrite_note" else {}

    outcome = propose(tool, **{arg: obj.pk}, **extra)

    assert outcome.result["status"] == "awaiting_owner_approval"
    obj.refresh_from_db()
    assert {f.name: getattr(obj, f.name) for f in obj._meta.fields} == before


def test_every_registered_destructive_tool_is_covered_by_a_test():
    destructive = {t.name for t in all_tools() if t.permission == Permission.DESTRUCTIVE}
    covered = {"delete_task", "delete_note", "delete_project", "rewrite_note", "delete_memory"}
    # tests/automations
    covered |= {"delete_automation", "cancel_automation", "schedule_agent_prompt"}
    assert destructive <= covered, destructive - covered


def test_scheduled_mode_cannot_reach_destructive_tools(task):
    outcome = propose("delete_task", mode="scheduled", task_id=task.pk)

    assert not outcome.ok
    assert outcome.activity["status"] == "refused"
    assert not PendingAction.objects.exists()


def test_unknown_target_is_an_error_and_proposes_nothing(db):
    outcome = propose("delete_task", task_id=999)
    assert not outcome.ok
    assert not PendingAction.objects.exists()


def test_approve_commits_and_undo_restores(api, task):
    action_id = propose("delete_task", task_id=task.pk).result["action_id"]

    listed = api.get("/api/approvals").json()
    assert [a["id"] for a in listed["items"]] == [action_id]

    approved = api.post(f"/api/approvals/{action_id}/approve")
    assert approved.status_code == 200, approved.content
    assert approved.json()["status"] == "committed"
    assert api.get(f"/api/tasks/{task.pk}").status_code == 404
    assert api.get("/api/tasks").json()["count"] == 0
    assert api.get("/api/search", {"q": "bank"}).json()["count"] == 0

    undone = api.post(f"/api/approvals/{action_id}/undo")
    assert undone.status_code == 200
    assert undone.json()["status"] == "undone"
    restored = api.get(f"/api/tasks/{task.pk}").json()
    assert restored["title"] == "Call the bank"

    again = api.post(f"/api/approvals/{action_id}/undo")
    assert again.status_code == 409
    kinds = list(
        ApprovalEvent.objects.filter(action_ref=action_id)
        .order_by("at", "id")
        .values_list("kind", flat=True)
    )
    assert kinds == ["proposed", "committed", "undone"]
    audit = api.get("/api/approvals/audit", {"action_id": action_id}).json()
    assert audit["count"] == 3
    assert {e["actor"] for e in audit["items"]} == {"model", "owner:owner"}


def test_reject_commits_nothing_and_cannot_be_approved_after(api, task):
    action_id = propose("delete_task", task_id=task.pk).result["action_id"]

    rejected = api.post(f"/api/approvals/{action_id}/reject")
    assert rejected.json()["status"] == "rejected"
    late = api.post(f"/api/approvals/{action_id}/approve")
    assert late.status_code == 409
    assert late.json()["error"]["code"] == "CONFLICT"
    assert Task.objects.live().filter(pk=task.pk).exists()


def test_expired_action_commits_nothing(api, task):
    action_id = propose("delete_task", task_id=task.pk).result["action_id"]

    with time_machine.travel(timezone.now() + dt.timedelta(minutes=31)):
        response = api.post(f"/api/approvals/{action_id}/approve")
        assert response.status_code == 409
        assert "expired" in response.json()["error"]["message"]
        assert api.get("/api/approvals").json()["count"] == 0

    assert PendingAction.objects.get(pk=action_id).status == "expired"
    assert Task.objects.live().filter(pk=task.pk).exists()
    assert ApprovalEvent.objects.filter(action_ref=action_id, kind="expired").count() == 1


def test_sweep_expires_pending_actions(task):
    action_id = propose("delete_task", task_id=task.pk).result["action_id"]
    assert approvals.pending_actions_expire() == 0
    with time_machine.travel(timezone.now() + dt.timedelta(minutes=31)):
        assert approvals.pending_actions_expire() == 1
    assert PendingAction.objects.get(pk=action_id).status == "expired"


def test_changed_target_fails_with_the_stale_message(api, task):
    action_id = propose("delete_task", task_id=task.pk).result["action_id"]
    api.patch(f"/api/tasks/{task.pk}", {"title": "Call the bank about the loan"})

    response = api.post(f"/api/approvals/{action_id}/approve")

    body = response.json()
    assert body["status"] == "failed"
    assert body["error"] == approvals.STALE_MESSAGE
    assert Task.objects.live().filter(pk=task.pk).exists()


def test_vanished_target_fails(api, task):
    action_id = propose("delete_task", task_id=task.pk).result["action_id"]
    assert api.delete(f"/api/tasks/{task.pk}").status_code == 204

    response = api.post(f"/api/approvals/{action_id}/approve")

    assert response.json()["status"] == "failed"
    assert ApprovalEvent.objects.filter(action_ref=action_id, kind="failed").count() == 1


def test_rewrite_note_shows_a_diff_commits_and_undoes(api, db):
    note = services.note_create(title="Packing", content="socks\nshoes")
    action_id = propose("rewrite_note", note_id=note.pk, content="socks\nboots").result["action_id"]

    card = api.get("/api/approvals").json()["items"][0]
    assert "-shoes" in card["preview"] and "+boots" in card["preview"]

    api.post(f"/api/approvals/{action_id}/approve")
    assert Note.objects.get(pk=note.pk).content == "socks\nboots"
    api.post(f"/api/approvals/{action_id}/undo")
    assert Note.objects.get(pk=note.pk).content == "socks\nshoes"


def test_undo_of_a_rewrite_refuses_after_a_later_edit(api, db):
    note = services.note_create(title="Packing", content="socks")
    action_id = propose("rewrite_note", note_id=note.pk, content="boots").result["action_id"]
    api.post(f"/api/approvals/{action_id}/approve")
    services.note_append(note_id=note.pk, text="hat")

    response = api.post(f"/api/approvals/{action_id}/undo")

    assert response.status_code == 409
    assert Note.objects.get(pk=note.pk).content == "boots\n\nhat"


def test_delete_project_detaches_its_tasks_and_undo_brings_them_back(api, db):
    project = services.project_create(name="House")
    inside = services.task_create(title="Paint", project_id=project.pk)
    action_id = propose("delete_project", project_id=project.pk).result["action_id"]

    api.post(f"/api/approvals/{action_id}/approve")
    assert Task.objects.get(pk=inside.pk).project_id is None
    assert not Project.objects.live().filter(pk=project.pk).exists()

    api.post(f"/api/approvals/{action_id}/undo")
    assert Task.objects.get(pk=inside.pk).project_id == project.pk


def test_undo_of_a_project_already_out_of_the_bin_is_a_conflict_like_any_other(api, db):
    project = services.project_create(name="House")
    inside = services.task_create(title="Paint", project_id=project.pk)
    action_id = propose("delete_project", project_id=project.pk).result["action_id"]
    api.post(f"/api/approvals/{action_id}/approve")
    Project.objects.filter(pk=project.pk).update(deleted_at=None)  # restored by hand (admin)

    response = api.post(f"/api/approvals/{action_id}/undo")

    assert response.status_code == 409
    assert "no longer in the bin" in response.json()["error"]["message"]
    assert PendingAction.objects.get(pk=action_id).status == "committed"
    assert Task.objects.get(pk=inside.pk).project_id is None


def test_undo_window_closes_after_30_days(api, task):
    action_id = propose("delete_task", task_id=task.pk).result["action_id"]
    api.post(f"/api/approvals/{action_id}/approve")
    with time_machine.travel(timezone.now() + dt.timedelta(days=31)):
        api.login()  # the session itself has reached its 30-day lifetime
        response = api.post(f"/api/approvals/{action_id}/undo")
    assert response.status_code == 409
    assert not Task.objects.live().filter(pk=task.pk).exists()


def test_bin_is_purged_after_30_days_and_old_actions_pruned(api, task):
    action_id = propose("delete_task", task_id=task.pk).result["action_id"]
    api.post(f"/api/approvals/{action_id}/approve")
    assert bin_purge_expired() == 0
    with time_machine.travel(timezone.now() + dt.timedelta(days=31)):
        assert bin_purge_expired() == 1
        assert approvals.pending_actions_prune() == 1
    assert not Task.objects.filter(pk=task.pk).exists()
    assert not PendingAction.objects.filter(pk=action_id).exists()
    assert ApprovalEvent.objects.filter(action_ref=action_id).count() == 2  # the audit stays


def test_a_new_proposal_prunes_the_decided_actions_older_than_30_days(db):
    tasks = [services.task_create(title=f"Errand {n}") for n in range(4)]
    old, recent, waiting = (
        propose("delete_task", task_id=task.pk).result["action_id"] for task in tasks[:3]
    )
    for action_id in (old, recent):
        approvals.pending_action_reject(action_id=action_id, user=None)
    ago = {old: 31, recent: 29, waiting: 31}
    for action_id, days in ago.items():
        created = timezone.now() - dt.timedelta(days=days)
        PendingAction.objects.filter(pk=action_id).update(created_at=created)

    newest = propose("delete_task", task_id=tasks[3].pk).result["action_id"]

    assert dict(PendingAction.objects.values_list("pk", "status")) == {
        recent: "rejected",
        waiting: "pending",  # not decided: the beat job expires it first
        newest: "pending",
    }
    # The audit trail of the pruned action stays.
    kinds = ApprovalEvent.objects.filter(action_ref=old).values_list("kind", flat=True)
    assert sorted(kinds) == ["proposed", "rejected"]


def test_approval_endpoints_need_the_owner(anon_api, task):
    action_id = propose("delete_task", task_id=task.pk).result["action_id"]
    for verb in ("approve", "reject", "undo"):
        response = anon_api.post(f"/api/approvals/{action_id}/{verb}")
        assert response.status_code == 401
    assert PendingAction.objects.get(pk=action_id).status == "pending"


def test_unknown_approval_is_404(api):
    response = api.post("/api/approvals/4242/approve")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "NOT_FOUND"


def test_delete_memory_goes_to_the_bin_with_history_and_undo_restores(api, db):
    from memory import services as memories
    from memory.models import Memory

    memory = memories.memory_create_unchecked(text="Allergic to penicillin", source="owner")
    action_id = propose("delete_memory", memory_id=memory.pk).result["action_id"]
    assert Memory.objects.live().filter(pk=memory.pk).exists()

    api.post(f"/api/approvals/{action_id}/approve")
    assert api.get(f"/api/memories/{memory.pk}").status_code == 404
    assert api.get("/api/search", {"q": "penicillin"}).json()["count"] == 0

    api.post(f"/api/approvals/{action_id}/undo")
    assert api.get(f"/api/memories/{memory.pk}").json()["text"] == "Allergic to penicillin"
    actions = list(memory.revisions.order_by("created_at", "id").values_list("action", flat=True))
    assert actions == ["create", "delete", "restore"]


def test_a_personal_api_token_can_read_approvals_but_never_decide(api, owner, task):
    from django.test import Client

    from talorys.accounts.services import api_token_create

    _, raw = api_token_create(user=owner, name="script")
    action_id = propose("delete_task", task_id=task.pk).result["action_id"]
    script = Client()
    bearer = {"Authorization": f"Bearer {raw}"}

    assert script.get("/api/approvals", headers=bearer).json()["count"] == 1
    for verb in ("approve", "reject", "undo"):
        response = script.post(f"/api/approvals/{action_id}/{verb}", headers=bearer)
        assert response.status_code == 401, verb
    assert PendingAction.objects.get(pk=action_id).status == "pending"
    assert Task.objects.live().filter(pk=task.pk).exists()


def test_the_audit_trail_cannot_be_edited_or_deleted_in_the_admin(admin_client, task):
    action_id = propose("delete_task", task_id=task.pk).result["action_id"]
    event = ApprovalEvent.objects.get(action_ref=action_id)

    assert admin_client.get(f"/admin/approvals/approvalevent/{event.pk}/change/").status_code == 200
    delete = admin_client.post(
        f"/admin/approvals/approvalevent/{event.pk}/delete/", {"post": "yes"}
    )
    assert delete.status_code == 403
    assert ApprovalEvent.objects.filter(pk=event.pk).exists()
