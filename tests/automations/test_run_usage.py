"""A scheduled prompt's receipt records what it spent: model requests and tokens."""

from __future__ import annotations

import json

from django.utils import timezone

from automations.models import AutomationRun
from automations.services.crud import automation_create
from automations.services.runs import automation_run
from tests.agent.fake_openai import error, text, tool_calls
from tests.agent.test_runner import TURN_DATABASE, use_fake

pytestmark = TURN_DATABASE  # a turn's trips see committed rows only


def run_prompt() -> AutomationRun:
    automation = automation_create(
        name="Review",
        kind="agent_prompt",
        message="Review my tasks",
        schedule={"type": "daily", "time": "08:00"},
    )
    return automation_run(automation_id=automation.pk, slot=timezone.now(), version=1)


def test_a_run_records_its_requests_and_tokens(db, fake_openai):
    use_fake(fake_openai)
    fake_openai.script(
        tool_calls(("list_tasks", json.dumps({"status": "open"})), usage=(20, 9)),
        text("Nothing urgent.", usage=(40, 6)),
    )
    run = run_prompt()
    assert run.status == "ok", run.error
    assert run.usage == {"requests": 2, "input_tokens": 60, "output_tokens": 15}
    run.refresh_from_db()
    assert run.usage == {"requests": 2, "input_tokens": 60, "output_tokens": 15}


def test_a_failed_run_records_what_it_spent_before_failing(db, fake_openai):
    use_fake(fake_openai)
    fake_openai.script(
        tool_calls(("list_tasks", json.dumps({})), usage=(20, 9)),
        *[error(400, "bad request")] * 5,
    )
    run = run_prompt()
    assert run.status == "error"
    assert run.usage["requests"] >= 2 and run.usage["input_tokens"] == 20
