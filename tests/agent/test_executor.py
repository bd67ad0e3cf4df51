"""The executor is the gate between the model's tool calls and the owner's data: mode, budget,
caps, repetition, validation, and no destructive effect during a turn."""

from __future__ import annotations

import json
import logging
from typing import Any, ClassVar

import pytest

from agent.executor import ToolExecutor, ToolOutcome
from talorys.lib import tools as registry
from talorys.lib.tools import Permission, Proposal, Tool, ToolArgs, ToolContext
from talorys.notifications.models import Notification
from talorys.providers.base import ToolCall
from talorys.workspace import services
from talorys.workspace.models import Project, Task

pytestmark = pytest.mark.django_db

WRITE_TOOLS = {
    "create_task",
    "update_task",
    "complete_task",
    "create_project",
    "create_note",
    "append_to_note",
    "rename_note",
    "remember",
    "correct_memory",
}


def executor(
    mode: str = "chat", *, max_tool_calls: int = 12, max_identical_calls: int = 2
) -> ToolExecutor:
    source = "chat" if mode == "chat" else "automation:7"
    return ToolExecutor(
        ctx=ToolContext(mode=mode, source=source),
        max_tool_calls=max_tool_calls,
        max_identical_calls=max_identical_calls,
    )


_ids = iter(range(1, 10_000))


def run(ex: ToolExecutor, tool: str, /, **arguments: Any) -> ToolOutcome:
    return ex.execute(ToolCall(id=f"call-{next(_ids)}", name=tool, arguments=arguments))


def code(outcome: ToolOutcome) -> str:
    assert not outcome.ok, outcome.result
    return outcome.result["error"]["code"]


class TaskIdArgs(ToolArgs):
    task_id: int


class WipeTask(Tool):
    """A destructive tool whose every entry point would delete the task, and records that it ran."""

    name = "test_wipe_task"
    description = "Delete a task (test only)."
    args = TaskIdArgs
    permission = Permission.DESTRUCTIVE
    entered: ClassVar[list[str]] = []

    def run(self, args: TaskIdArgs, ctx: ToolContext) -> dict[str, Any]:
        self.entered.append("run")
        services.task_delete(task_id=args.task_id)
        return {}

    def prepare(self, args: TaskIdArgs, ctx: ToolContext) -> Proposal:
        self.entered.append("prepare")
        return Proposal(target_id=args.task_id, snapshot="x", summary="Delete it")

    def commit(self, proposal: Proposal, ctx: ToolContext) -> dict[str, Any]:
        self.entered.append("commit")
        services.task_delete(task_id=proposal.target_id)
        return {}


class Explode(Tool):
    name = "test_explode"
    description = "Fails with an internal error (test only)."

    def run(self, args: ToolArgs, ctx: ToolContext) -> dict[str, Any]:
        raise RuntimeError("password=hunter2 at /srv/talorys/secret.py line 3")


@pytest.fixture
def wipe_task(monkeypatch) -> type[WipeTask]:
    WipeTask.entered = []
    monkeypatch.setitem(registry._REGISTRY, WipeTask.name, WipeTask())
    return WipeTask


@pytest.fixture
def explode(monkeypatch) -> None:
    monkeypatch.setitem(registry._REGISTRY, Explode.name, Explode())


# --- mode --------------------------------------------------------------------------------------


def test_chat_specs_offer_every_tool_with_its_schema():
    specs = {spec["name"]: spec for spec in executor("chat").specs()}

    assert WRITE_TOOLS | {"list_tasks", "notify_owner", "search"} <= set(specs)
    assert specs["create_task"]["parameters"]["required"] == ["title"]
    assert "offset" in specs["create_task"]["parameters"]["properties"]["due_at"]["description"]


def test_scheduled_specs_offer_only_read_tools_and_notify_owner(wipe_task):
    specs = {spec["name"] for spec in executor("scheduled").specs()}

    assert {"list_tasks", "read_note", "list_memories", "search", "notify_owner"} <= specs
    assert not specs & (WRITE_TOOLS | {wipe_task.name})
    for name in specs - {"notify_owner"}:
        assert registry.get_tool(name).permission == Permission.READ


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("create_task", {"title": "Injected"}),
        ("create_project", {"name": "Injected"}),
        ("test_wipe_task", {"task_id": 1}),
    ],
)
def test_scheduled_run_is_refused_a_write_tool_it_names_anyway(wipe_task, tool, arguments):
    task = services.task_create(title="Keep me")
    arguments = {"task_id": task.pk} if "task_id" in arguments else arguments

    outcome = run(executor("scheduled"), tool, **arguments)

    assert code(outcome) == "TOOL_NOT_ALLOWED"
    assert outcome.activity["status"] == "refused"
    assert list(Task.objects.values_list("title", flat=True)) == ["Keep me"]
    assert not Project.objects.exists()
    assert wipe_task.entered == []


def test_scheduled_notify_owner_sends_an_automation_notification():
    outcome = run(executor("scheduled"), "notify_owner", title="3 tasks due today", body="…")

    assert outcome.ok, outcome.result
    notification = Notification.objects.get()
    assert notification.title == "3 tasks due today"
    assert (notification.kind, notification.source) == ("automation", "automation:7")


# --- budget, caps, repetition ------------------------------------------------------------------


def test_the_turn_budget_stops_calls_and_empties_specs():
    ex = executor(max_tool_calls=2)

    first = run(ex, "create_task", title="One")
    second = run(ex, "create_task", title="Two")
    assert ex.budget_left == 0
    third = run(ex, "create_task", title="Three")

    assert first.ok and second.ok
    assert code(third) == "TOOL_BUDGET_EXHAUSTED"
    assert third.activity["status"] == "refused"
    assert ex.specs() == []
    assert sorted(Task.objects.values_list("title", flat=True)) == ["One", "Two"]


def test_failed_calls_spend_the_budget_too():
    ex = executor(max_tool_calls=2)

    run(ex, "create_task", title="")
    ex.execute(ToolCall(id="x", name="create_task", arguments=None, raw_arguments="{title:"))

    assert ex.budget_left == 0
    assert code(run(ex, "create_task", title="Fine")) == "TOOL_BUDGET_EXHAUSTED"
    assert not Task.objects.exists()


def test_a_tool_cannot_exceed_its_own_cap():
    cap = registry.get_tool("notify_owner").cap
    ex = executor(max_tool_calls=cap + 5)

    outcomes = [run(ex, "notify_owner", title=f"Note {n}") for n in range(cap + 1)]

    assert all(o.ok for o in outcomes[:cap])
    assert code(outcomes[cap]) == "TOOL_CAP_REACHED"
    assert Notification.objects.count() == cap
    assert run(ex, "list_tasks").ok  # other tools are still available


def test_identical_calls_are_refused_after_the_limit():
    ex = executor(max_identical_calls=2)

    outcomes = [
        run(ex, "create_task", title="Buy milk"),
        run(ex, "create_task", title="Buy milk", priority=2),  # the same call, spelled out
        run(ex, "create_task", title="Buy milk"),
    ]
    different = run(ex, "create_task", title="Buy bread")

    assert [o.ok for o in outcomes] == [True, True, False]
    assert code(outcomes[2]) == "DUPLICATE_CALL"
    assert different.ok
    assert Task.objects.filter(title="Buy milk").count() == 2


def test_a_fresh_executor_has_fresh_counters():
    for _ in range(2):
        ex = executor(max_tool_calls=1)
        assert run(ex, "list_tasks").ok


# --- validation and errors ---------------------------------------------------------------------


def test_arguments_that_are_not_a_json_object_are_explained():
    outcome = executor().execute(
        ToolCall(id="c1", name="create_task", arguments=None, raw_arguments='{"title": "Bu')
    )

    assert code(outcome) == "INVALID_ARGUMENTS"
    assert "JSON object" in outcome.result["error"]["message"]
    assert outcome.activity["status"] == "error"
    assert not Task.objects.exists()


def test_invalid_arguments_name_the_field_and_change_nothing():
    task = services.task_create(title="Pay rent")
    before = list(Task.objects.values())

    outcome = run(executor(), "update_task", task_id=task.pk, priority=9, due_at="tomorrow")

    message = outcome.result["error"]["message"]
    assert code(outcome) == "INVALID_ARGUMENTS"
    assert "priority" in message and "due_at" in message
    assert list(Task.objects.values()) == before


def test_unknown_tool_is_an_error_not_an_exception():
    outcome = run(executor(), "delete_everything")

    assert code(outcome) == "UNKNOWN_TOOL"
    assert outcome.call_id.startswith("call-")


def test_tool_and_app_errors_reach_the_model_as_structured_results():
    task = services.task_create(title="Pay rent")
    ex = executor()

    nothing = run(ex, "update_task", task_id=task.pk)  # ToolError
    missing = run(ex, "complete_task", task_id=task.pk + 100)  # talorys NotFound

    assert nothing.result == {
        "ok": False,
        "error": {"code": "NOTHING_TO_CHANGE", "message": "Give at least one field to change."},
    }
    assert missing.result["error"] == {
        "code": "NOT_FOUND",
        "message": f"Task {task.pk + 100} does not exist.",
    }
    assert json.loads(missing.content) == missing.result


def test_an_unexpected_failure_is_logged_but_never_shown_to_the_model(explode, caplog):
    with caplog.at_level(logging.ERROR, logger="agent.executor"):
        outcome = run(executor(), "test_explode")

    assert code(outcome) == "TOOL_FAILED"
    assert "hunter2" not in outcome.content and "secret.py" not in outcome.content
    assert "hunter2" not in json.dumps(outcome.activity)
    assert "hunter2" in caplog.text


# --- destructive tools -------------------------------------------------------------------------


def test_a_destructive_call_never_runs_during_the_turn(wipe_task):
    task = services.task_create(title="Keep me")

    outcome = run(executor(), "test_wipe_task", task_id=task.pk)

    # Only prepare runs: the call becomes a pending action for the owner to decide on.
    assert outcome.result["status"] == "awaiting_owner_approval"
    assert outcome.activity["status"] == "awaiting_approval"
    assert wipe_task.entered == ["prepare"]
    assert Task.objects.filter(pk=task.pk).exists()


# --- a turn's worth of calls -------------------------------------------------------------------


def test_a_sequence_of_calls_changes_the_owners_data_and_reports_activity():
    ex = executor()

    project = run(ex, "create_project", name="Garden")
    project_id = project.result["project"]["id"]
    created = run(ex, "create_task", title="Plant tomatoes", project_id=project_id)
    task_id = created.result["task"]["id"]
    listed = run(ex, "list_tasks", project_id=project_id, status="open")
    done = run(ex, "complete_task", task_id=task_id)

    task = Task.objects.get(pk=task_id)
    assert (task.project_id, task.status) == (project_id, "done")
    assert [t["id"] for t in listed.result["tasks"]] == [task_id]
    assert done.result["ok"] is True
    assert created.activity == {
        "tool": "create_task",
        "args": {"title": "Plant tomatoes", "project_id": project_id},
        "status": "ok",
        "summary": f"task {task_id}: Plant tomatoes",
    }
    assert listed.activity["summary"] == "tasks: 1"
    assert ex.budget_left == 12 - 4


def test_activity_keeps_long_arguments_short():
    note = services.note_create(title="Journal")

    outcome = run(executor(), "append_to_note", note_id=note.pk, text="word " * 2_000)

    assert outcome.ok
    assert len(outcome.activity["args"]["text"]) <= 200
    note.refresh_from_db()
    assert len(note.content) > 9_000
