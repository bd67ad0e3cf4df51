"""Races on PostgreSQL with real threads: restore against purge, revert against an edit.
Each ends with one clean winner and a clear answer for the other (never a 500)."""

from __future__ import annotations

import pytest
from django.test import Client

from talorys.history.models import Change
from talorys.lib.actors import Actor
from talorys.workspace import services
from talorys.workspace.models import Task
from tests.automations.conftest import in_threads
from tests.conftest import ApiClient

pytestmark = pytest.mark.django_db(transaction=True)
ROUNDS = 8


def session_clients(count: int) -> list[ApiClient]:
    clients = []
    for _ in range(count):
        client = ApiClient(Client(enforce_csrf_checks=True))
        assert client.login().status_code == 200
        clients.append(client)
    return clients


def test_restore_racing_purge_has_one_clean_winner(needs_postgres, owner):
    restorer, purger = session_clients(2)
    outcomes = set()
    for n in range(ROUNDS):
        task = services.task_create(title=f"Race {n}")
        services.task_delete(task_id=task.pk)

        restored, purged = in_threads(
            lambda pk=task.pk: restorer.post(f"/api/bin/task/{pk}/restore"),
            lambda pk=task.pk: purger.delete(f"/api/bin/task/{pk}"),
        )

        statuses = (restored.status_code, purged.status_code)
        assert statuses in {(204, 404), (404, 204)}, (restored.content, purged.content)
        loser = restored if restored.status_code == 404 else purged
        assert loser.json()["error"]["code"] == "NOT_FOUND"
        if statuses == (204, 404):
            assert Task.objects.live().filter(pk=task.pk).exists()
        else:
            assert not Task.objects.filter(pk=task.pk).exists()
            assert not Change.objects.filter(kind="task", object_id=task.pk).exists()
        outcomes.add(statuses)
    assert outcomes  # which one wins is the scheduler's choice; both are clean


def test_revert_racing_an_owner_edit_never_loses_the_edit(needs_postgres, owner):
    reverter, editor = session_clients(2)
    model = Actor(source="chat")
    for n in range(ROUNDS):
        task = services.task_create(title=f"Pay rent {n}", details="IBAN")
        services.task_update(task_id=task.pk, title="x", details="", actor=model)
        change = Change.objects.filter(kind="task", object_id=task.pk, action="update").get()

        reverted, edited = in_threads(
            lambda pk=change.pk: reverter.post(f"/api/changes/{pk}/revert"),
            lambda pk=task.pk: editor.patch(f"/api/tasks/{pk}", {"priority": 3}),
        )

        assert edited.status_code == 200, edited.content
        assert reverted.status_code in (200, 409), reverted.content
        task.refresh_from_db()
        assert task.priority == 3  # the owner's edit is never lost
        if reverted.status_code == 200:
            assert (task.title, task.details) == (f"Pay rent {n}", "IBAN")
        else:
            assert reverted.json()["error"]["code"] == "CONFLICT"
            assert (task.title, task.details) == ("x", "")
