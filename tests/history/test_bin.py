"""The bin: every delete, by the owner or the model, lands there for 30 days and comes back;
only the owner's session deletes for good."""

from __future__ import annotations

import datetime as dt
import itertools
from collections.abc import Callable
from typing import Any

import pytest
import time_machine
from django.utils import timezone

from agent.models import Conversation, Message
from automations.models import Automation
from automations.services.crud import automation_create, automation_delete
from automations.services.dispatch import automations_dispatch
from memory import services as memory_services
from memory.models import Memory, MemoryRevision
from talorys.accounts.services import api_token_create
from talorys.history import tasks as core_tasks
from talorys.history.models import Change
from talorys.lib.tools import ToolContext
from talorys.workspace import services
from talorys.workspace.models import Note, Project, Task
from tests.agent.test_runner import TURN_DATABASE
from tests.conftest import ApiClient

DAILY = {"type": "daily", "time": "09:00"}


def make_conversation() -> Conversation:
    conversation = Conversation.objects.create(title="Trip planning")
    Message.objects.create(conversation=conversation, role="user", content="Where to?")
    return conversation


_HOUSES = itertools.count(1)

# kind -> (make one, its API URL, the model)
KINDS: dict[str, tuple[Callable[[], Any], str, type]] = {
    "task": (lambda: services.task_create(title="Renew passport"), "/api/tasks", Task),
    "note": (lambda: services.note_create(title="Recipes", content="Soup"), "/api/notes", Note),
    # A new name each time: two live projects never share one.
    "project": (
        lambda: services.project_create(name=f"House {next(_HOUSES)}"),
        "/api/projects",
        Project,
    ),
    "memory": (
        lambda: memory_services.memory_create_unchecked(text="Sister Ana lives in Lisbon"),
        "/api/memories",
        Memory,
    ),
    "automation": (
        lambda: automation_create(name="Stretch", kind="reminder", schedule=DAILY),
        "/api/automations",
        Automation,
    ),
    "conversation": (make_conversation, "/api/conversations", Conversation),
}


def token_headers(owner: Any, scope: str) -> dict[str, str]:
    _token, raw = api_token_create(user=owner, name=f"{scope} script", scope=scope)
    return {"Authorization": f"Bearer {raw}"}


def bin_items(api: ApiClient) -> list[dict[str, Any]]:
    listed = api.get("/api/bin").json()
    assert listed["count"] == len(listed["items"])
    return listed["items"]


def error_code(response: Any) -> str:
    assert response["Content-Type"].startswith("application/json")
    return response.json()["error"]["code"]


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_kind_deleted_through_the_api_goes_to_the_bin_and_comes_back(api, kind):
    make, url, model = KINDS[kind]
    item = make()

    assert api.delete(f"{url}/{item.pk}").status_code == 204

    assert api.get(f"{url}/{item.pk}").status_code == 404
    assert api.get(url).json()["count"] == 0
    assert model.objects.filter(pk=item.pk).exists()  # kept, in the bin
    [binned] = bin_items(api)
    assert binned["kind"] == kind
    assert binned["id"] == item.pk
    assert binned["title"]
    assert binned["deleted_by"] == "owner"
    assert binned["deleted_at"]

    assert api.post(f"/api/bin/{kind}/{item.pk}/restore").status_code == 204

    assert api.get(f"{url}/{item.pk}").status_code == 200
    assert api.get(url).json()["count"] == 1
    assert bin_items(api) == []


def test_the_bin_names_who_deleted_and_a_write_token_may_restore(api, owner):
    write = token_headers(owner, "write")
    task = services.task_create(title="Call the bank")
    note = services.note_create(title="Ideas")
    assert api.delete(f"/api/tasks/{task.pk}", headers=write).status_code == 204
    propose = ToolContext(mode="chat", source="owner:owner")
    from talorys.workspace.tools.notes import DeleteNote

    DeleteNote().commit(DeleteNote().prepare(DeleteNote.args(note_id=note.pk), propose), propose)

    by_whom = {(item["kind"], item["deleted_by"]) for item in bin_items(api)}
    assert by_whom == {("task", f"token:{write['Authorization'][7:19]}"), ("note", "owner:owner")}

    assert api.post(f"/api/bin/task/{task.pk}/restore", headers=write).status_code == 204
    assert Task.objects.live().filter(pk=task.pk).exists()


def test_a_read_token_cannot_delete(api, owner):
    read = token_headers(owner, "read")
    task = services.task_create(title="Keep me")

    response = api.delete(f"/api/tasks/{task.pk}", headers=read)

    assert response.status_code == 403
    assert error_code(response) == "FORBIDDEN"
    assert Task.objects.live().filter(pk=task.pk).exists()


def test_purge_and_empty_need_the_session(api, anon_api, owner):
    write = token_headers(owner, "write")
    task = services.task_create(title="Old")
    services.task_delete(task_id=task.pk)

    for response in (
        api.delete(f"/api/bin/task/{task.pk}", headers=write),
        api.post("/api/bin/empty", headers=write),
        anon_api.delete(f"/api/bin/task/{task.pk}"),
        anon_api.post("/api/bin/empty"),
        anon_api.post(f"/api/bin/task/{task.pk}/restore"),
    ):
        assert response.status_code == 401, response.content
        assert error_code(response) == "UNAUTHORIZED"
    assert Task.objects.filter(pk=task.pk, deleted_at__isnull=False).exists()


def test_purge_deletes_one_item_for_good_with_its_history(api):
    memory = memory_services.memory_create_unchecked(text="Likes tea")
    memory_services.memory_update_unchecked(memory_id=memory.pk, text="Likes green tea")
    kept = memory_services.memory_create_unchecked(text="Lives in Lyon")
    memory_services.memory_delete(memory_id=memory.pk)
    memory_services.memory_delete(memory_id=kept.pk)

    assert api.delete(f"/api/bin/memory/{memory.pk}").status_code == 204

    assert not Memory.objects.filter(pk=memory.pk).exists()
    assert not MemoryRevision.objects.filter(memory_id=memory.pk).exists()
    assert not Change.objects.filter(kind="memory", object_id=memory.pk).exists()
    assert [(i["kind"], i["id"]) for i in bin_items(api)] == [("memory", kept.pk)]
    assert api.post(f"/api/bin/memory/{memory.pk}/restore").status_code == 404


def test_empty_purges_every_kind_and_leaves_live_items(api):
    binned, live = [], []
    for kind, (make, url, _model) in KINDS.items():
        live.append((kind, make()))
        item = make()
        assert api.delete(f"{url}/{item.pk}").status_code == 204
        binned.append((kind, item))

    response = api.post("/api/bin/empty")

    assert response.status_code == 200
    assert response.json() == {"purged": len(KINDS)}
    assert bin_items(api) == []
    for kind, item in binned:
        assert not KINDS[kind][2].objects.filter(pk=item.pk).exists(), kind
    for kind, item in live:
        assert KINDS[kind][2].objects.live().filter(pk=item.pk).exists(), kind


def test_restoring_a_project_brings_back_its_tasks_links(api):
    project = services.project_create(name="House")
    inside = [services.task_create(title=t, project_id=project.pk) for t in ("Paint", "Fix tap")]
    elsewhere = services.task_create(title="Call mum")

    assert api.delete(f"/api/projects/{project.pk}").status_code == 204
    assert not Task.objects.filter(project_id=project.pk).exists()
    # Moved elsewhere meanwhile: the owner's later choice stays.
    moved = services.project_create(name="Garden")
    services.task_update(task_id=inside[1].pk, project_id=moved.pk)

    assert api.post(f"/api/bin/project/{project.pk}/restore").status_code == 204

    assert Task.objects.get(pk=inside[0].pk).project_id == project.pk
    assert Task.objects.get(pk=inside[1].pk).project_id == moved.pk
    assert Task.objects.get(pk=elsewhere.pk).project_id is None


@pytest.mark.parametrize(
    ("method", "path", "status", "code"),
    [
        ("post", "/api/bin/widget/1/restore", 422, "VALIDATION"),
        ("delete", "/api/bin/widget/1", 422, "VALIDATION"),
        ("post", "/api/bin/task/999999/restore", 404, "NOT_FOUND"),
        ("delete", "/api/bin/task/999999", 404, "NOT_FOUND"),
        ("post", "/api/bin/task/abc/restore", 404, "NOT_FOUND"),
        ("post", "/api/bin/task/LIVE/restore", 404, "NOT_FOUND"),
        ("delete", "/api/bin/task/LIVE", 404, "NOT_FOUND"),
    ],
)
def test_bad_kind_or_id_is_a_clear_error_that_changes_nothing(api, method, path, status, code):
    live = services.task_create(title="Live")
    binned = services.task_create(title="Binned")
    services.task_delete(task_id=binned.pk)

    response = getattr(api, method)(path.replace("LIVE", str(live.pk)))

    assert response.status_code == status, response.content
    assert error_code(response) == code
    assert Task.objects.live().filter(pk=live.pk).exists()
    assert Task.objects.filter(pk=binned.pk, deleted_at__isnull=False).exists()


@TURN_DATABASE  # the refused turn's trips see committed rows only
def test_binned_items_are_invisible_to_lists_search_tools_and_turns(api):
    from agent.executor import ToolExecutor
    from talorys.providers.base import ToolCall

    items = {kind: make() for kind, (make, _url, _m) in KINDS.items()}
    for kind, item in items.items():
        assert api.delete(f"{KINDS[kind][1]}/{item.pk}").status_code == 204

    for query in ("passport", "Recipes", "House", "Lisbon"):
        assert api.get("/api/search", {"q": query}).json()["count"] == 0, query
    executor = ToolExecutor(ctx=ToolContext(mode="chat", source="chat"), max_tool_calls=20)

    def call(name: str, **arguments: Any) -> dict[str, Any]:
        return executor.execute(ToolCall(id="c", name=name, arguments=arguments)).result

    for name in ("list_tasks", "list_notes", "list_projects", "list_memories", "list_automations"):
        assert call(name)["total"] == 0, name
    assert call("search", query="passport")["hits"] == []
    assert call("read_note", note_id=items["note"].pk)["error"]["code"] == "NOT_FOUND"
    # A binned conversation takes no turns; a binned automation never comes due.
    response = api.post("/api/chat", {"conversation_id": items["conversation"].pk, "text": "hi"})
    assert response.status_code == 404
    Automation.objects.filter(pk=items["automation"].pk).update(
        next_run_at=timezone.now() - dt.timedelta(minutes=1), enabled=True
    )
    assert automations_dispatch() == []


def test_the_bin_is_purged_after_30_days_of_every_kind(api):
    for make, url, _model in KINDS.values():
        assert api.delete(f"{url}/{make().pk}").status_code == 204
    fresh = services.task_create(title="Deleted later")

    assert core_tasks.purge_bin() == 0
    with time_machine.travel(timezone.now() + dt.timedelta(days=29)):
        services.task_delete(task_id=fresh.pk)
    with time_machine.travel(timezone.now() + dt.timedelta(days=31)):
        assert core_tasks.purge_bin() == len(KINDS)

    for _make, _url, model in KINDS.values():
        assert model.objects.filter(deleted_at__isnull=False).exclude(pk=fresh.pk).count() == 0
    assert Task.objects.filter(pk=fresh.pk).exists()  # 2 days in the bin: kept
    assert not Message.objects.exists()  # the conversation's messages went with it


def test_one_beat_job_purges_the_bin_the_others_leave_it(api, settings):
    from automations import tasks as automation_tasks

    purging = [
        name for name, job in settings.CELERY_BEAT_SCHEDULE.items() if "purge" in job["task"]
    ]
    assert [settings.CELERY_BEAT_SCHEDULE[name]["task"] for name in purging] == [
        "talorys.history.tasks.purge_bin"
    ]
    memory = memory_services.memory_create_unchecked(text="Old fact")
    automation = KINDS["automation"][0]()
    memory_services.memory_delete(memory_id=memory.pk)
    automation_delete(automation_id=automation.pk)

    with time_machine.travel(timezone.now() + dt.timedelta(days=31)):
        automation_tasks.housekeeping()  # it used to purge the automations' bin too
        assert Automation.objects.filter(pk=automation.pk).exists()
        assert core_tasks.purge_bin() == 2

    assert not Memory.objects.filter(pk=memory.pk).exists()
    assert not Automation.objects.filter(pk=automation.pk).exists()


def test_a_restored_conversation_takes_turns_again(api):
    conversation = make_conversation()
    assert api.delete(f"/api/conversations/{conversation.pk}").status_code == 204

    assert api.post(f"/api/bin/conversation/{conversation.pk}/restore").status_code == 204

    detail = api.get(f"/api/conversations/{conversation.pk}").json()
    assert [m["content"] for m in detail["messages"]] == ["Where to?"]
    assert api.post("/api/chat/cancel", {"conversation_id": conversation.pk}).status_code == 200


def test_the_api_s_kinds_are_the_registry_s(api):
    from talorys.history.kinds import kind_names

    schema = api.get("/api/openapi.json").json()
    operation = schema["paths"]["/api/bin/{kind}/{item_id}/restore"]["post"]
    kind = next(p for p in operation["parameters"] if p["name"] == "kind")

    assert kind["schema"]["enum"] == kind_names()
    assert set(kind_names()) == {
        "task",
        "note",
        "project",
        "memory",
        "automation",
        "conversation",
        "import",
        "file",
    }
