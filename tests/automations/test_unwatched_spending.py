"""Only the owner's session starts a repeating scheduled prompt (it spends the model budget at
every run while nobody watches): the rule lives in automations/services/crud.py, under the
automation's row lock, so the tools, the API, the pages and the admin all meet the same one."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.db import connection, transaction

from agent.executor import ToolExecutor, ToolOutcome
from automations.models import Automation
from automations.services import crud
from talorys.history.models import Change
from talorys.lib.actors import Actor
from talorys.lib.tools import ToolContext
from talorys.providers.base import ToolCall
from tests.automations.test_scheduled_prompt_approval import snapshot
from tests.waiting import HANG_SECONDS, wait_for

DAILY = {"type": "daily", "time": "07:00"}
ONCE = {"type": "once", "at": "2100-01-01T07:00:00+00:00"}
PROMPT: dict[str, Any] = {
    "name": "Digest",
    "kind": "agent_prompt",
    "message": "Tell me my top three tasks.",
    "schedule": DAILY,
}
MODEL = Actor(source="chat")
TOKEN = Actor(source="token:abc123")


@pytest.mark.parametrize("actor", [MODEL, TOKEN], ids=["model", "token"])
def test_the_service_refuses_a_repeating_prompt_to_the_model_and_a_token(db, actor):
    with pytest.raises(crud.UnwatchedSpending):
        crud.automation_create(**PROMPT, actor=actor)
    assert not Automation.objects.exists()

    once = crud.automation_create(**PROMPT | {"schedule": ONCE}, actor=actor)
    reminder = crud.automation_create(**PROMPT | {"kind": "reminder"}, actor=actor)
    paused = crud.automation_pause(automation_id=crud.automation_create(**PROMPT).pk)
    binned = crud.automation_create(**PROMPT | {"name": "Binned"})
    crud.automation_delete(automation_id=binned.pk)
    before = snapshot(once), snapshot(paused), snapshot(binned)
    changes = Change.objects.count()

    with pytest.raises(crud.UnwatchedSpending):
        crud.automation_update(automation_id=once.pk, schedule=DAILY, actor=actor)
    with pytest.raises(crud.UnwatchedSpending):
        crud.automation_update(automation_id=paused.pk, message="Other", actor=actor)
    with pytest.raises(crud.UnwatchedSpending):
        crud.automation_resume(automation_id=paused.pk, actor=actor)
    with pytest.raises(crud.UnwatchedSpending):
        crud.automation_restore(automation_id=binned.pk, actor=actor)
    assert (snapshot(once), snapshot(paused), snapshot(binned)) == before
    assert Change.objects.count() == changes

    # What spends nothing repeatedly stays theirs to change; the owner may do all of it.
    crud.automation_update(automation_id=reminder.pk, schedule=DAILY, actor=actor)
    crud.automation_pause(automation_id=reminder.pk, actor=actor)
    crud.automation_resume(automation_id=reminder.pk, actor=actor)
    assert crud.automation_resume(automation_id=paused.pk).enabled is True
    assert crud.automation_restore(automation_id=binned.pk).deleted_at is None


def test_the_model_meets_the_same_rule_through_its_tools(db):
    paused = crud.automation_pause(automation_id=crud.automation_create(**PROMPT).pk)

    created = call("create_automation", **PROMPT | {"name": "Another"})
    resumed = call("resume_automation", automation_id=paused.pk)

    assert (created.ok, created.result["error"]["code"]) == (False, "INVALID_ARGUMENTS")
    assert "schedule_agent_prompt" in created.result["error"]["message"]
    assert (resumed.ok, resumed.result["error"]["code"]) == (False, "NEEDS_OWNER")
    assert list(Automation.objects.values_list("name", "enabled")) == [("Digest", False)]


def call(tool: str, **arguments: Any) -> ToolOutcome:
    executor = ToolExecutor(ctx=ToolContext(mode="chat", source="chat"), max_tool_calls=12)
    return executor.execute(ToolCall(id=f"call-{tool}", name=tool, arguments=arguments))


def _waiting_on_locks() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")  # else the statistics stay as first read
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
        return cursor.fetchone()[0]


@pytest.mark.django_db(transaction=True)
def test_a_resume_racing_the_owners_pause_cannot_restart_a_repeating_prompt(needs_postgres):
    """The owner pauses a running daily prompt while the model's resume_automation is on its
    way. The tool used to read the row before the lock: it saw the prompt running (nothing to
    refuse), waited for the pause to commit, then resumed the paused prompt. Checked under the
    lock, the resume sees the pause and is refused."""
    automation = crud.automation_create(**PROMPT)
    paused = threading.Event()
    release = threading.Event()
    errors: list[BaseException] = []

    def owner_pauses() -> None:
        try:
            with transaction.atomic():
                crud.automation_pause(automation_id=automation.pk)
                paused.set()
                # Held open until the model's resume waits on the row lock.
                assert release.wait(HANG_SECONDS)
        except BaseException as exc:  # reported in the main thread
            errors.append(exc)
        finally:
            connection.close()

    outcome: list[ToolOutcome] = []

    def model_resumes() -> None:
        try:
            outcome.append(call("resume_automation", automation_id=automation.pk))
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    pause = threading.Thread(target=owner_pauses)
    pause.start()
    assert paused.wait(HANG_SECONDS)
    resume = threading.Thread(target=model_resumes)
    resume.start()
    try:
        wait_for(lambda: _waiting_on_locks() >= 1, "the resume to wait on the row lock")
    finally:
        release.set()
        pause.join(HANG_SECONDS)
        resume.join(HANG_SECONDS)
    assert not errors, errors
    [result] = outcome
    assert (result.ok, result.result["error"]["code"]) == (False, "NEEDS_OWNER"), result.result
    automation.refresh_from_db()
    assert (automation.enabled, automation.next_run_at) == (False, None)
