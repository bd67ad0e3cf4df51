"""An automation's prompt run by the model in scheduled mode (agent.runner.run_scheduled_reply)."""

from __future__ import annotations

import json

import pytest

from agent.runner import run_scheduled_reply
from approvals.models import PendingAction
from talorys.lib.errors import BudgetExhausted
from talorys.lib.tools import Permission, get_tool
from talorys.notifications.models import Notification
from talorys.owner.models import UsageDay
from talorys.workspace import services
from talorys.workspace.models import Task
from tests.agent.fake_openai import text, tool_calls
from tests.agent.test_runner import TURN_DATABASE, use_fake

pytestmark = TURN_DATABASE  # a turn's trips see committed rows only


def test_scheduled_run_reads_and_notifies_but_cannot_write_even_when_the_model_asks(
    db, fake_openai
):
    task = services.task_create(title="Renew passport")
    use_fake(fake_openai)
    fake_openai.script(
        tool_calls(
            ("list_tasks", json.dumps({"status": "open"})),
            ("create_task", json.dumps({"title": "Injected"})),
            ("delete_task", json.dumps({"task_id": task.pk})),
            ("notify_owner", json.dumps({"title": "1 open task", "body": "Renew passport"})),
        ),
        text("Sent you a summary of 1 open task."),
    )

    reply = run_scheduled_reply(prompt="Tell me about my open tasks.", source="automation:7")

    assert reply.text == "Sent you a summary of 1 open task."
    assert list(Task.objects.live().values_list("title", flat=True)) == ["Renew passport"]
    assert not PendingAction.objects.exists()
    notification = Notification.objects.get()
    assert (notification.title, notification.source) == ("1 open task", "automation:7")
    offered = {t["function"]["name"] for t in fake_openai.requests[0]["tools"]}
    assert "notify_owner" in offered
    assert all(get_tool(name).permission == Permission.READ for name in offered - {"notify_owner"})
    results = [
        json.loads(m["content"]) for m in fake_openai.requests[1]["messages"] if m["role"] == "tool"
    ]
    assert [r["ok"] for r in results] == [True, False, False, True]
    # The stored prompt is the user message; the system prompt says what kind of run it is.
    first = fake_openai.requests[0]["messages"]
    assert first[-1] == {"role": "user", "content": "Tell me about my open tasks."}
    assert "scheduled routine" in first[0]["content"]
    usage = UsageDay.objects.get()
    assert (usage.scheduled_ai_requests, usage.ai_requests) == (2, 2)


@pytest.mark.parametrize("limit", ["daily_scheduled_ai_requests", "daily_ai_requests"])
def test_scheduled_run_without_budget_makes_no_model_request(db, fake_openai, limit):
    use_fake(fake_openai, **{limit: 0})

    with pytest.raises(BudgetExhausted):
        run_scheduled_reply(prompt="Anything due?", source="automation:1")

    assert fake_openai.requests == []
    # All or none: the kind that had budget was not spent either.
    assert not UsageDay.objects.exclude(scheduled_ai_requests=0, ai_requests=0).exists()
