"""Many owners' clicks at once: each action commits exactly once (PostgreSQL, real threads)."""

from __future__ import annotations

import threading
from collections import Counter

import pytest
from django.db import connection
from django.test import Client

from approvals.models import ApprovalEvent, PendingAction
from talorys.workspace import services
from talorys.workspace.models import Note
from tests.approvals.test_approvals import propose
from tests.conftest import ApiClient
from tests.waiting import HANG_SECONDS

ACTIONS = 10
APPROVERS = 8


@pytest.mark.django_db(transaction=True)
def test_concurrent_approvals_commit_each_action_once(needs_postgres, owner):
    notes = [services.note_create(title=f"n{i}", content="keep") for i in range(ACTIONS)]
    action_ids = [
        propose("rewrite_note", note_id=n.pk, content="rewritten").result["action_id"]
        for n in notes
    ]
    clients = []
    for _ in range(APPROVERS):
        client = ApiClient(Client(enforce_csrf_checks=True))
        assert client.login().status_code == 200
        clients.append(client)
    statuses: Counter[int] = Counter()
    lock = threading.Lock()

    def approve_all(client: ApiClient, barrier: threading.Barrier) -> None:
        try:
            for action_id in action_ids:
                barrier.wait(timeout=HANG_SECONDS)
                response = client.post(f"/api/approvals/{action_id}/approve")
                with lock:
                    statuses[response.status_code] += 1
        finally:
            connection.close()  # each thread has its own connection; give it back

    barrier = threading.Barrier(APPROVERS)
    threads = [threading.Thread(target=approve_all, args=(c, barrier)) for c in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)

    commits = ApprovalEvent.objects.filter(kind="committed").count()
    print(
        f"\nrace: {ACTIONS * APPROVERS} approvals of {ACTIONS} actions -> {commits} commits, statuses {dict(statuses)}"
    )
    assert statuses == Counter({200: ACTIONS, 409: ACTIONS * (APPROVERS - 1)})
    assert commits == ACTIONS
    assert set(PendingAction.objects.values_list("status", flat=True)) == {"committed"}
    assert set(Note.objects.values_list("content", flat=True)) == {"rewritten"}
