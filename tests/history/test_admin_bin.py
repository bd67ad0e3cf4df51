"""Deleting in the admin is the service's delete: to the bin, restorable (talorys/history/bin.py)."""

from __future__ import annotations

from agent.models import Conversation, Message
from memory import services as memory_services
from memory.models import Memory
from talorys.history.models import Change
from talorys.workspace import services
from talorys.workspace.models import Task
from tests.workspace.test_admin_services import operator, post, url  # noqa: F401 (fixture)


def test_deleting_in_the_admin_moves_to_the_bin_through_the_service(operator):  # noqa: F811
    one = services.task_create(title="Pay rent")
    more = [services.task_create(title=f"Errand {i}") for i in range(2)]
    memory = memory_services.memory_create_unchecked(text="Lives in Lyon")

    page = operator.post(url(Task, "delete", one.pk), {"post": "yes"})
    bulk = operator.post(
        url(Task, "changelist"),
        {"action": "delete_selected", "_selected_action": [t.pk for t in more], "post": "yes"},
    )
    forgotten = operator.post(
        url(Memory, "changelist"),
        {"action": "delete_selected", "_selected_action": [memory.pk], "post": "yes"},
    )

    assert (page.status_code, bulk.status_code, forgotten.status_code) == (302, 302, 302)
    # task_delete and memory_delete bin, and the bin can give them back; a plain SQL delete
    # (Django's default for the bulk action) would have erased them.
    assert Task.objects.filter(deleted_at__isnull=False).count() == 3
    assert not Task.objects.live().exists()
    assert Memory.objects.get(pk=memory.pk).deleted_at is not None
    assert memory.revisions.order_by("-id").first().action == "delete"


def test_a_conversation_deleted_in_the_admin_can_be_restored_from_the_bin(operator, api):  # noqa: F811
    conversation = Conversation.objects.create(title="Trip")
    Message.objects.create(conversation=conversation, role="user", content="Plan it")

    response = operator.post(url(Conversation, "delete", conversation.pk), {"post": "yes"})

    assert response.status_code == 302
    assert api.get("/api/conversations").json()["count"] == 0
    assert api.post(f"/api/bin/conversation/{conversation.pk}/restore").status_code == 204
    assert api.get(f"/api/conversations/{conversation.pk}").json()["messages"][0]["content"] == (
        "Plan it"
    )


def test_the_change_log_names_the_operator_for_admin_edits_and_deletes(operator):  # noqa: F811
    task = services.task_create(title="Pay rent")

    edited = post(operator, url(Task, "change", task.pk), title="Pay the rent")
    deleted = operator.post(url(Task, "delete", task.pk), {"post": "yes"})

    assert (edited.status_code, deleted.status_code) == (302, 302)
    log = Change.objects.filter(kind="task", object_id=task.pk).order_by("id")
    assert list(log.values_list("action", "source")) == [
        ("create", "owner"),
        ("update", "admin:owner"),
        ("delete", "admin:owner"),
    ]
    assert log.get(action="update").after["title"] == "Pay the rent"
