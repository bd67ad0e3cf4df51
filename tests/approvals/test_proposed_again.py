"""One waiting approval per tool and target: a regenerated, retried or edited reply that proposes
the same change again gets the approval already waiting (under the new reply, no second
notification); a different change to the same target withdraws it; racing proposals agree."""

from __future__ import annotations

import datetime as dt
import json
import threading

import pytest
import time_machine
from django.db import connection
from django.utils import timezone

from agent.executor import ToolExecutor
from agent.selectors import outcome_note
from approvals.models import ApprovalEvent, PendingAction
from talorys.lib.tools import ToolContext
from talorys.notifications.models import Notification
from talorys.providers.base import ToolCall
from talorys.workspace import services
from tests.agent.fake_openai import text, tool_calls
from tests.agent.test_runner import TURN_DATABASE, reply_of, turn, use_fake
from tests.approvals.test_approvals import propose
from tests.waiting import HANG_SECONDS

pytestmark = TURN_DATABASE  # a turn's trips see committed rows only


def tool_results(request: dict) -> list[dict]:
    return [json.loads(m["content"]) for m in request["messages"] if m["role"] == "tool"]


def test_regenerate_after_a_proposed_delete_keeps_one_approval_under_the_new_reply(
    api, fake_openai
):
    task = services.task_create(title="Old errand")
    use_fake(fake_openai)
    delete = tool_calls(("delete_task", json.dumps({"task_id": task.pk})))
    fake_openai.script(delete, text("I asked for your approval to delete it."))
    first = turn(text="Delete the old errand")
    conversation_id = first[-1]["conversation_id"]
    action = PendingAction.objects.get()

    fake_openai.script(delete, text("It waits for your approval."))
    second = turn(conversation_id=conversation_id, rerun="regenerate")

    assert list(PendingAction.objects.values_list("pk", "status")) == [(action.pk, "pending")]
    assert Notification.objects.count() == 1
    assert Notification.objects.get().source == f"approval:{action.pk}"
    # The card shows under the new reply, which carries the same action.
    new_reply = reply_of(second)
    action.refresh_from_db()
    assert (action.conversation_id, action.message_id) == (conversation_id, new_reply.pk)
    assert [a.get("action_id") for a in new_reply.tool_activity] == [action.pk]
    # The model was told that this approval was already waiting.
    (result,) = tool_results(fake_openai.requests[-1])
    assert result["status"] == "awaiting_owner_approval"
    assert result["action_id"] == action.pk
    assert "already waiting" in result["note"]
    kinds = list(ApprovalEvent.objects.order_by("id").values_list("kind", "detail"))
    assert [kind for kind, _ in kinds] == ["proposed", "proposed"]
    assert "Proposed again" in kinds[1][1]
    # Approving it once is all it takes.
    assert api.post(f"/api/approvals/{action.pk}/approve").json()["status"] == "committed"


def test_an_edit_that_proposes_a_different_rewrite_withdraws_the_first(api, fake_openai):
    note = services.note_create(title="Packing", content="socks and shoes")
    use_fake(fake_openai)
    rewrite = {"note_id": note.pk, "content": "socks and boots"}
    fake_openai.script(
        tool_calls(("rewrite_note", json.dumps(rewrite))), text("Asked for your approval.")
    )
    first = turn(text="Swap shoes for boots")
    conversation_id = first[-1]["conversation_id"]
    earlier = PendingAction.objects.get()

    rewrite["content"] = "socks and sandals"
    fake_openai.script(
        tool_calls(("rewrite_note", json.dumps(rewrite))), text("Asked for your approval.")
    )
    turn(conversation_id=conversation_id, text="Swap shoes for sandals", rerun="edit")

    earlier.refresh_from_db()
    later = PendingAction.objects.get(status="pending")
    assert earlier.status == "withdrawn"
    assert later.payload["content"] == "socks and sandals"
    withdrawn = ApprovalEvent.objects.get(kind="withdrawn")
    assert (withdrawn.action_ref, withdrawn.actor) == (earlier.pk, "model")
    assert f"#{later.pk}" in withdrawn.detail
    # The first notification no longer asks; the second does.
    first_notice = Notification.objects.get(source=f"approval:{earlier.pk}")
    assert first_notice.title == "Withdrawn: Rewrite the note “Packing”"
    assert first_notice.read_at is not None
    second_notice = Notification.objects.get(source=f"approval:{later.pk}")
    assert (second_notice.title.startswith("Waiting"), second_notice.read_at) == (True, None)
    # A withdrawn approval can no longer be approved; the card and the list say so.
    assert api.post(f"/api/approvals/{earlier.pk}/approve").status_code == 409
    assert api.get(f"/api/approvals/{earlier.pk}").json()["status"] == "withdrawn"


def test_the_same_proposal_after_the_target_changed_replaces_the_waiting_one(db):
    task = services.task_create(title="Call the bank")
    earlier = propose("delete_task", task_id=task.pk).result["action_id"]
    services.task_update(task_id=task.pk, title="Call the bank at nine")

    later = propose("delete_task", task_id=task.pk).result["action_id"]

    assert later != earlier
    assert dict(PendingAction.objects.values_list("pk", "status")) == {
        earlier: "withdrawn",
        later: "pending",
    }
    # A later turn reads what became of the first.
    assert outcome_note(PendingAction.objects.get(pk=earlier)).endswith(
        "replaced by a newer proposal; nothing was changed.]"
    )


def test_a_proposal_after_the_waiting_one_expired_is_asked_afresh(db):
    task = services.task_create(title="Call the bank")
    earlier = propose("delete_task", task_id=task.pk).result["action_id"]
    PendingAction.objects.filter(pk=earlier).update(expires_at="2000-01-01T00:00:00Z")

    outcome = propose("delete_task", task_id=task.pk)

    assert outcome.result["action_id"] != earlier
    assert "already waiting" not in outcome.result["note"]
    assert PendingAction.objects.get(pk=earlier).status == "expired"
    assert Notification.objects.get(source=f"approval:{earlier}").title.startswith("Expired: ")


def test_proposing_again_never_extends_the_approvals_30_minutes(db):
    task = services.task_create(title="Call the bank")
    first = propose("delete_task", task_id=task.pk).result["action_id"]
    expiry = PendingAction.objects.get(pk=first).expires_at

    # Asked again 20 minutes in: the same approval, with the expiry it was first given.
    with time_machine.travel(timezone.now() + dt.timedelta(minutes=20)):
        again = propose("delete_task", task_id=task.pk)
    assert again.result["action_id"] == first
    assert "already waiting" in again.result["note"]
    assert PendingAction.objects.get(pk=first).expires_at == expiry

    # Asked again once it expired: a new approval with 30 minutes of its own.
    later = expiry + dt.timedelta(seconds=1)
    with time_machine.travel(later, tick=False):
        renewed = propose("delete_task", task_id=task.pk).result["action_id"]
    assert renewed != first
    assert dict(PendingAction.objects.values_list("pk", "status")) == {
        first: "expired",
        renewed: "pending",
    }
    assert PendingAction.objects.get(pk=renewed).expires_at == later + dt.timedelta(minutes=30)


def test_proposals_that_make_something_new_do_not_compete(db):
    def schedule(name: str):
        executor = ToolExecutor(ctx=ToolContext(mode="chat"), max_tool_calls=10)
        daily = {"type": "daily", "time": "07:00"}
        args = {"name": name, "message": "Plan my day", "schedule": daily}
        return executor.execute(ToolCall(id="c", name="schedule_agent_prompt", arguments=args))

    first, second = schedule("Morning plan"), schedule("Evening plan")
    again = schedule("Morning plan")

    assert first.result["action_id"] != second.result["action_id"]
    assert again.result["action_id"] == first.result["action_id"]
    assert "already waiting" in again.result["note"]
    assert list(PendingAction.objects.values_list("status", flat=True)) == ["pending"] * 2


@pytest.mark.parametrize("same", [True, False], ids=["same change", "different changes"])
def test_racing_proposals_for_one_target_leave_one_waiting(needs_postgres, same):
    note = services.note_create(title="Packing", content="socks and shoes")
    racers = 6
    barrier = threading.Barrier(racers)
    results: list[dict] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def race(n: int) -> None:
        try:
            content = "socks and boots" if same else f"socks and boots {n}"
            barrier.wait(timeout=HANG_SECONDS)
            outcome = propose("rewrite_note", note_id=note.pk, content=content)
            with lock:
                (results if outcome.ok else errors).append(outcome.result)
        except BaseException as exc:  # reported below, not lost with the thread
            with lock:
                errors.append(exc)
        finally:
            connection.close()  # each thread has its own connection

    threads = [threading.Thread(target=race, args=(n,)) for n in range(racers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)

    assert errors == []
    assert len(results) == racers
    waiting = PendingAction.objects.get(status="pending")
    statuses = list(PendingAction.objects.values_list("status", flat=True))
    notices = Notification.objects.filter(kind="approval")
    asking = [n for n in notices if n.title.startswith("Waiting")]
    assert [n.source for n in asking] == [f"approval:{waiting.pk}"]
    if same:
        # One action, one notification: every racer got the same approval back.
        assert statuses == ["pending"]
        assert {r["action_id"] for r in results} == {waiting.pk}
        assert notices.count() == 1
    else:
        # Each racer's change was asked for in turn; all but the last were withdrawn.
        assert sorted(statuses) == ["pending"] + ["withdrawn"] * (racers - 1)
        assert all(n.read_at is not None for n in notices if n not in asking)


@pytest.mark.django_db(transaction=True)
def test_the_migration_keeps_the_newest_of_the_actions_waiting_for_one_target():
    """Before one waiting action per target was enforced, a regenerate could leave two; the
    upgrade must not stop on them."""
    from django.db.migrations.executor import MigrationExecutor

    before = [("approvals", "0001_initial")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    old = executor.loader.project_state(before).apps.get_model("approvals", "PendingAction")
    later = timezone.now() + dt.timedelta(minutes=30)

    def waiting(target_id: int, tool: str = "delete_task") -> int:
        return old.objects.create(
            tool=tool, target_id=target_id, snapshot="x", summary="s", expires_at=later
        ).pk

    older, newer, other, new_a, new_b = (
        waiting(7),
        waiting(7),
        waiting(8),
        waiting(0, "schedule_agent_prompt"),
        waiting(0, "schedule_agent_prompt"),
    )

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    assert dict(PendingAction.objects.values_list("pk", "status")) == {
        older: "withdrawn",
        newer: "pending",
        other: "pending",
        new_a: "pending",
        new_b: "pending",
    }
    assert list(ApprovalEvent.objects.values_list("action_ref", "kind")) == [(older, "withdrawn")]
