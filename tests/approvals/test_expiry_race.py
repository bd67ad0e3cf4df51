"""Expiry recorded by many sweeps at once (PostgreSQL, real threads): the beat job expires due
actions in bulk, and however many sweeps and approvals race, each action is expired once, with
one audit line, and none is carried out."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from approvals import services as approval_services
from approvals.models import ApprovalEvent, PendingAction
from talorys.lib.errors import Conflict
from talorys.workspace import services
from talorys.workspace.models import Task
from tests.approvals.test_approvals import propose
from tests.automations.conftest import in_threads

ACTIONS = 12
SWEEPS = 4


@pytest.mark.django_db(transaction=True)
def test_concurrent_sweeps_and_approvals_expire_each_due_action_once(needs_postgres, owner):
    tasks = [services.task_create(title=f"Errand {i}") for i in range(ACTIONS)]
    ids = [propose("delete_task", task_id=t.pk).result["action_id"] for t in tasks]
    PendingAction.objects.update(expires_at=timezone.now() - dt.timedelta(seconds=1))

    def approve_all() -> list[str]:
        refusals = []
        for action_id in ids:
            try:
                approval_services.pending_action_approve(action_id=action_id, user=owner)
            except Conflict as exc:
                refusals.append(exc.message)
        return refusals

    results = in_threads(*[approval_services.pending_actions_expire] * SWEEPS, approve_all)

    *expired_counts, refusals = results
    # The sweeps expired some, the approver's own checks the rest; every approval was refused.
    assert len(refusals) == ACTIONS and all("expired" in r for r in refusals)
    assert sum(expired_counts) <= ACTIONS
    assert set(PendingAction.objects.values_list("status", flat=True)) == {"expired"}
    expired_events = ApprovalEvent.objects.filter(kind="expired")
    assert sorted(expired_events.values_list("action_ref", flat=True)) == sorted(ids)
    assert not ApprovalEvent.objects.filter(kind="committed").exists()
    assert Task.objects.live().count() == ACTIONS


@pytest.mark.django_db(transaction=True)
def test_concurrent_sweeps_alone_share_the_due_actions(needs_postgres):
    tasks = [services.task_create(title=f"Errand {i}") for i in range(ACTIONS)]
    for t in tasks:
        propose("delete_task", task_id=t.pk)
    PendingAction.objects.update(expires_at=timezone.now() - dt.timedelta(seconds=1))

    counts = in_threads(*[approval_services.pending_actions_expire] * SWEEPS)

    assert sum(counts) == ACTIONS  # disjoint: each due action counted by exactly one sweep
    assert ApprovalEvent.objects.filter(kind="expired").count() == ACTIONS
