"""No lost update: every task, project, note and memory carries a ``version``; an edit that names
the version it read is refused with 409 CONFLICT (the envelope, the current version in details)
when the item changed since, and changes nothing. The owner's edit through the API and the
model's edit through its tools, racing on one item on PostgreSQL, leave one winner and one clear
refusal."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from agent.executor import ToolExecutor, ToolOutcome
from memory import services as memory_services
from memory.models import Memory
from talorys.history.models import Change
from talorys.lib.tools import ToolContext
from talorys.providers.base import ToolCall
from talorys.workspace import services
from talorys.workspace.models import Note, Project, Task
from tests.automations.conftest import in_threads
from tests.conftest import ApiClient

pytestmark = pytest.mark.django_db(transaction=True)

ROUNDS = 6


def model_call(tool: str, /, **arguments: Any) -> ToolOutcome:
    executor = ToolExecutor(ctx=ToolContext(mode="chat", source="chat"), max_tool_calls=12)
    return executor.execute(ToolCall(id="call-1", name=tool, arguments=arguments))


def _make(kind: str) -> tuple[str, Any]:
    if kind == "task":
        return "/api/tasks", services.task_create(title="Pay rent")
    if kind == "project":
        return "/api/projects", services.project_create(name="Home")
    if kind == "note":
        return "/api/notes", services.note_create(title="Plan", content="draft")
    return "/api/memories", memory_services.memory_create_unchecked(text="Lives in Berlin")


# One text field each kind is edited through.
FIELD = {"task": "title", "project": "name", "note": "title", "memory": "text"}
MODEL = {"task": Task, "project": Project, "note": Note, "memory": Memory}


@pytest.mark.parametrize("kind", ["task", "project", "note", "memory"])
def test_an_edit_from_an_older_version_is_refused_and_changes_nothing(api, kind):
    base, item = _make(kind)
    field = FIELD[kind]
    read = api.get(f"{base}/{item.pk}").json()
    assert read["version"] == 1

    first = api.patch(f"{base}/{item.pk}", {field: "First edit", "version": 1})
    assert first.status_code == 200, first.content
    assert first.json()["version"] == 2

    stale = api.patch(f"{base}/{item.pk}", {field: "Second edit", "version": 1})
    assert stale.status_code == 409, stale.content
    error = stale.json()["error"]
    assert error["code"] == "CONFLICT"
    assert error["details"] == {"version": 2}
    assert "changed since you read it" in error["message"]
    row = MODEL[kind].objects.get(pk=item.pk)
    assert (getattr(row, field), row.version) == ("First edit", 2)

    # Without a version the edit applies to whatever is current (and is counted).
    unchecked = api.patch(f"{base}/{item.pk}", {field: "Third edit"})
    assert unchecked.status_code == 200
    assert unchecked.json()["version"] == 3


@pytest.mark.parametrize("bad", [0, -1, "two", 2**40, 1.5])
def test_a_malformed_version_is_a_422_and_changes_nothing(api, bad):
    task = services.task_create(title="Pay rent")
    answer = api.patch(f"/api/tasks/{task.pk}", {"title": "Changed", "version": bad})
    assert answer.status_code == 422, answer.content
    task.refresh_from_db()
    assert (task.title, task.version) == ("Pay rent", 1)


def test_every_change_of_a_note_counts_including_appends_and_reverts(api):
    note = services.note_create(title="Plan", content="one")
    assert model_call("append_to_note", note_id=note.pk, text="two").ok
    note.refresh_from_db()
    assert note.version == 2
    change = Change.objects.filter(kind="note", object_id=note.pk, action="update").get()
    assert api.post(f"/api/changes/{change.pk}/revert").status_code in (200, 204)
    note.refresh_from_db()
    assert (note.content, note.version) == ("one", 3)


def test_the_model_sees_versions_and_its_stale_edit_is_refused_for_it_to_read_again(api):
    task = services.task_create(title="Pay rent")
    listed = model_call("list_tasks")
    assert listed.ok
    assert listed.result["tasks"][0]["version"] == 1
    assert api.patch(f"/api/tasks/{task.pk}", {"title": "Pay the rent"}).status_code == 200

    stale = model_call("update_task", task_id=task.pk, title="Rent", version=1)

    assert not stale.ok
    assert stale.result["error"]["code"] == "CONFLICT"
    task.refresh_from_db()
    assert (task.title, task.version) == ("Pay the rent", 2)
    fresh = model_call("update_task", task_id=task.pk, title="Rent", version=2)
    assert fresh.ok, fresh.result
    assert fresh.result["task"]["version"] == 3


def test_the_note_page_keeps_the_owners_text_when_the_note_changed_meanwhile(owner):
    client = Client()
    client.force_login(owner)
    note = services.note_create(title="Plan", content="the first text")
    page = client.get(f"/notes/{note.pk}/")
    assert b'name="version" value="1"' in page.content
    model_call("append_to_note", note_id=note.pk, text="the model's paragraph")

    answer = client.post(f"/notes/{note.pk}/", {"content": "the owner's rewrite", "version": "1"})

    assert answer.status_code == 409
    body = answer.content.decode()
    assert "the owner&#x27;s rewrite" in body  # the draft, kept in the textarea
    assert 'id="stale-draft"' in body
    assert 'name="version" value="2"' in body  # saving again is a choice, over version 2
    note.refresh_from_db()
    assert note.content == "the first text\n\nthe model's paragraph"
    saved = client.post(f"/notes/{note.pk}/", {"content": "the owner's rewrite", "version": "2"})
    assert saved.status_code == 303
    note.refresh_from_db()
    assert (note.content, note.version) == ("the owner's rewrite", 3)


def test_the_task_page_refuses_a_stale_form_with_a_message(owner):
    client = Client()
    client.force_login(owner)
    task = services.task_create(title="Pay rent")
    services.task_update(task_id=task.pk, title="Pay the rent")

    answer = client.post(f"/tasks/{task.pk}/", {"title": "Rent", "version": "1"}, follow=True)

    assert "changed since you read it" in answer.content.decode()
    task.refresh_from_db()
    assert task.title == "Pay the rent"


# --- the race: the owner through the API, the model through its tool, at once, on PostgreSQL --


def _owner_client() -> ApiClient:
    client = ApiClient(Client(enforce_csrf_checks=True))
    assert client.login().status_code == 200
    return client


TOOL_EDIT = {
    "task": lambda pk, version: model_call(
        "update_task", task_id=pk, title="The model's", version=version
    ),
    "note": lambda pk, version: model_call(
        "rename_note", note_id=pk, title="The model's", version=version
    ),
    "memory": lambda pk, version: model_call(
        "correct_memory", memory_id=pk, text="The model's", version=version
    ),
}


@pytest.mark.parametrize("kind", ["task", "note", "memory"])
def test_owner_and_model_editing_one_item_at_once_lose_nothing(needs_postgres, owner, kind):
    owner_api = _owner_client()
    field = FIELD[kind]
    outcomes = set()
    for _ in range(ROUNDS):
        base, item = _make(kind)
        changes_before = Change.objects.filter(kind=kind, object_id=item.pk).count()

        url = f"{base}/{item.pk}"
        by_owner, by_model = in_threads(
            lambda url=url: owner_api.patch(url, {field: "The owner's", "version": 1}),
            lambda pk=item.pk: TOOL_EDIT[kind](pk, 1),
        )

        assert by_owner.status_code in (200, 409), by_owner.content
        # Exactly one of them wrote; the other was told, and changed nothing.
        assert (by_owner.status_code == 200) != by_model.ok, (by_owner.content, by_model.result)
        row = MODEL[kind].objects.get(pk=item.pk)
        winner = "The owner's" if by_owner.status_code == 200 else "The model's"
        assert (getattr(row, field), row.version) == (winner, 2)
        if by_model.ok:
            assert by_owner.json()["error"]["details"] == {"version": 2}
        else:
            assert by_model.result["error"]["code"] == "CONFLICT"
        assert Change.objects.filter(kind=kind, object_id=item.pk).count() == changes_before + 1
        outcomes.add(winner)
        if kind == "memory":
            # The next round's edit would duplicate this memory (the conflict check): binned.
            memory_services.memory_delete(memory_id=item.pk)
    assert outcomes  # who wins is the scheduler's choice; both endings are clean
