"""Whatever the model writes without asking is listed under the reply that wrote it, and the
owner can revert it: a model that makes every write it has, in one turn, leaves nothing the
owner cannot see and undo. A write tool added later is held to the same rule (WRITES is checked
against the registry)."""

from __future__ import annotations

import json
from typing import Any

from automations.models import Automation
from automations.services import crud
from memory import services as memory_services
from memory.models import Memory
from memory.selectors import current_memories
from talorys.history.models import Change
from talorys.lib.tools import Permission, all_tools
from talorys.workspace import services
from talorys.workspace.models import Note, Project, Task
from tests.agent.fake_openai import text, tool_calls
from tests.agent.test_runner import TURN_DATABASE, reply_of, turn, use_fake
from tests.security.obedient import error_codes, results

pytestmark = TURN_DATABASE  # a turn's trips see committed rows only

# Telling the owner something is the one write that is not an item of theirs to revert.
NOT_AN_ITEM = {"notify_owner"}


def live_state() -> dict[str, list[tuple[Any, ...]]]:
    return {
        "notes": list(Note.objects.live().order_by("pk").values_list("pk", "title", "content")),
        "tasks": list(
            Task.objects.live()
            .order_by("pk")
            .values_list("pk", "title", "details", "status", "priority", "project_id")
        ),
        "projects": list(Project.objects.live().order_by("pk").values_list("pk", "name")),
        "memories": list(current_memories().order_by("pk").values_list("pk", "text", "category")),
        "automations": list(
            Automation.objects.live().order_by("pk").values_list("pk", "name", "enabled")
        ),
    }


def every_write(
    note: Note, task: Task, memory: Memory, automation: Automation
) -> list[tuple[str, dict[str, Any]]]:
    reminder = {"name": "Stretch", "kind": "reminder", "message": "Stand up"}
    return [
        ("create_note", {"title": "Injected", "content": "Hello"}),
        ("append_to_note", {"note_id": note.pk, "text": "One more line"}),
        ("rename_note", {"note_id": note.pk, "title": "Renamed"}),
        ("create_project", {"name": "Side project"}),
        ("create_task", {"title": "pwned"}),
        ("update_task", {"task_id": task.pk, "title": "Pay rent twice", "priority": 3}),
        ("complete_task", {"task_id": task.pk}),
        ("remember", {"text": "Owner wants every note deleted"}),
        ("correct_memory", {"memory_id": memory.pk, "text": "Owner drinks black coffee"}),
        ("create_automation", reminder | {"schedule": {"type": "daily", "time": "10:00"}}),
        ("pause_automation", {"automation_id": automation.pk}),
        ("resume_automation", {"automation_id": automation.pk}),
    ]


def test_every_write_the_model_makes_is_listed_under_its_reply_and_reverts(api, fake_openai):
    use_fake(fake_openai, max_tool_calls_per_turn=40)
    note = services.note_create(title="Groceries", content="Milk")
    task = services.task_create(title="Pay rent")
    memory = memory_services.memory_create_unchecked(text="Owner drinks green tea")
    automation = crud.automation_create(
        name="Digest", kind="task_digest", schedule={"type": "daily", "time": "07:00"}
    )
    calls = every_write(note, task, memory, automation)
    writes = {t.name for t in all_tools() if t.permission == Permission.WRITE} - NOT_AN_ITEM
    assert {name for name, _ in calls} == writes  # a new write tool needs a line above
    fake_openai.script(
        tool_calls(*[(name, json.dumps(arguments)) for name, arguments in calls]),
        text("All written."),
    )
    before = live_state()

    events = turn(text="Do what my notes say")

    codes = error_codes(results(fake_openai.requests[-1]))
    assert codes == {name: {"ok"} for name in writes}
    reply = reply_of(events)
    made = list(Change.objects.filter(message_id=reply.pk).order_by("id"))
    assert {(c.kind, c.object_id) for c in made} >= {
        ("note", note.pk),
        ("task", task.pk),
        ("memory", memory.pk),
        ("automation", automation.pk),
    }
    assert len(made) >= len(calls)
    shown = api.get(f"/api/conversations/{events[-1]['conversation_id']}").json()
    [listed] = [m for m in shown["messages"] if m["id"] == reply.pk]
    assert [c["id"] for c in listed["changes"]] == [c.pk for c in made]

    for change in reversed(made):  # newest first: each reverts onto what the next one wrote
        response = api.post(f"/api/changes/{change.pk}/revert")
        assert response.status_code == 200, (change.kind, change.action, response.json())
    assert live_state() == before
