"""A pending action past its expiry reads as expired everywhere the owner and the model look, and
reading it writes nothing: the beat job writes the stored status, the deciders re-check it under
the row lock."""

from __future__ import annotations

import datetime as dt

import pytest
import time_machine
from django.db import connection
from django.forms.models import model_to_dict
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from agent.selectors import outcome_note
from approvals import tasks
from approvals.models import ApprovalEvent, PendingAction
from talorys.notifications.models import Notification
from talorys.workspace import services
from tests.approvals.test_approvals import propose

LATER = dt.timedelta(minutes=31)


@pytest.fixture
def action(db) -> PendingAction:
    task = services.task_create(title="Call the bank")
    action_id = propose("delete_task", task_id=task.pk).result["action_id"]
    return PendingAction.objects.get(pk=action_id)


def _approval_writes(queries: CaptureQueriesContext) -> list[str]:
    """The statements that wrote to an approvals table (the session's own writes aside)."""
    writes = ("INSERT", "UPDATE", "DELETE")
    return [
        query["sql"]
        for query in queries.captured_queries
        if query["sql"].lstrip().upper().startswith(writes) and "approvals_" in query["sql"]
    ]


def test_reading_an_expired_action_writes_nothing_and_shows_it_expired(api, client, owner, action):
    client.force_login(owner)
    before = model_to_dict(PendingAction.objects.get(pk=action.pk))
    with time_machine.travel(timezone.now() + LATER), CaptureQueriesContext(connection) as queries:
        one = api.get(f"/api/approvals/{action.pk}").json()
        waiting = api.get("/api/approvals").json()
        expired = api.get("/api/approvals?status=expired").json()
        waiting_page = client.get("/approvals/").content.decode()
        decided_page = client.get("/approvals/?show=decided").content.decode()

    assert one["status"] == "expired"
    assert waiting["count"] == 0
    assert [item["id"] for item in expired["items"]] == [action.pk]
    assert expired["items"][0]["status"] == "expired"
    assert "Nothing is waiting for you." in waiting_page
    assert ">Expired<" in decided_page
    assert _approval_writes(queries) == []
    assert model_to_dict(PendingAction.objects.get(pk=action.pk)) == before
    assert not ApprovalEvent.objects.filter(action_ref=action.pk, kind="expired").exists()


def test_a_later_turn_reads_a_due_expiry_as_expired(action):
    with time_machine.travel(timezone.now() + LATER):
        note = outcome_note(PendingAction.objects.get(pk=action.pk))
    assert "expired without a decision" in note
    assert PendingAction.objects.get(pk=action.pk).status == "pending"


def test_the_beat_job_writes_the_expiry(action):
    assert tasks.expire_pending_actions.apply().get() == 0
    with time_machine.travel(timezone.now() + LATER):
        assert tasks.expire_pending_actions.apply().get() == 1
        assert tasks.expire_pending_actions.apply().get() == 0

    stored = PendingAction.objects.get(pk=action.pk)
    assert stored.status == "expired" and stored.decided_at is not None
    events = ApprovalEvent.objects.filter(action_ref=action.pk, kind="expired")
    assert list(events.values_list("actor", flat=True)) == ["system"]
    notification = Notification.objects.get(source=f"approval:{action.pk}")
    assert notification.title.startswith("Expired:")
