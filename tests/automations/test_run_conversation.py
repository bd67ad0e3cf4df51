"""A scheduled prompt's run is a conversation: its prompt and the model's answer are saved as
one (origin ``automation``), the run's receipt and the API name it, the notification opens it,
and the owner continues it like any chat, with the briefing in the model's history."""

from __future__ import annotations

import json

from django.utils import timezone

from agent.models import Conversation, Message, Origin
from automations.models import AutomationRun
from automations.services.crud import automation_create
from automations.services.runs import automation_run
from tests.agent.fake_openai import text, tool_calls
from tests.agent.test_runner import TURN_DATABASE, sent_messages, turn, use_fake

pytestmark = TURN_DATABASE  # a turn's trips see committed rows only

BRIEFING = (
    "## Today\n\n- **Dentist** at 10:00\n- Call Sam\n\n| task | due |\n| --- | --- |\n| Tax | Fri |"
)


def briefing_runs(fake_openai) -> AutomationRun:
    use_fake(fake_openai)
    fake_openai.script(tool_calls(("list_tasks", json.dumps({"status": "open"}))), text(BRIEFING))
    automation = automation_create(
        name="Morning briefing",
        kind="agent_prompt",
        message="Brief me on today.",
        schedule={"type": "daily", "time": "07:00"},
    )
    run = automation_run(automation_id=automation.pk, slot=timezone.now(), version=1)
    assert run is not None and run.status == "ok", run and run.error
    return run


def test_a_run_writes_its_prompt_and_answer_as_a_conversation(db, fake_openai):
    run = briefing_runs(fake_openai)
    run.refresh_from_db()
    conversation = Conversation.objects.get(pk=run.conversation_id)
    assert conversation.origin == Origin.AUTOMATION
    assert conversation.title.startswith("Morning briefing · ")
    prompt, answer = conversation.messages.order_by("id")
    assert (prompt.role, prompt.content, prompt.origin) == (
        "user",
        "Brief me on today.",
        "automation",
    )
    assert (answer.role, answer.content, answer.parent_id) == ("assistant", BRIEFING, prompt.pk)
    assert [a["tool"] for a in answer.tool_activity] == ["list_tasks"]
    # The notification opens the conversation, on the pages and from a push or a channel.
    notification = run.notification
    assert notification.source == f"conversation:{conversation.pk}"
    assert notification.link() == notification.opens() == f"/c/{conversation.pk}/"
    assert notification.body == BRIEFING


def test_the_owner_continues_the_briefing_like_any_chat(db, fake_openai):
    run = briefing_runs(fake_openai)
    fake_openai.script(text("Moved the dentist to Monday."))
    events = turn(conversation_id=run.conversation_id, text="Move the dentist to Monday")
    assert events[-1]["type"] == "done"
    # The model is asked with the prompt and the briefing as the conversation so far.
    assert sent_messages(fake_openai.requests[-1])[1:] == [
        ("user", "Brief me on today."),
        ("assistant", BRIEFING),
        ("user", "Move the dentist to Monday"),
    ]
    contents = Message.objects.filter(conversation_id=run.conversation_id).order_by("id")
    assert [m.content for m in contents][-1] == "Moved the dentist to Monday."
    # The run's title is kept: no turn retitles it.
    assert Conversation.objects.get(pk=run.conversation_id).title.startswith("Morning briefing")


def test_the_api_gives_the_run_its_conversation(api, fake_openai):
    run = briefing_runs(fake_openai)
    runs = api.get(f"/api/automations/{run.automation_id}/runs").json()
    assert [r["conversation_id"] for r in runs["items"]] == [run.conversation_id]
    conversation = api.get(f"/api/conversations/{run.conversation_id}").json()
    assert conversation["origin"] == "automation"


def test_a_failed_run_writes_no_conversation(db, fake_openai):
    use_fake(fake_openai, daily_ai_requests=0)
    automation = automation_create(
        name="Briefing",
        kind="agent_prompt",
        message="Brief me",
        schedule={"type": "daily", "time": "07:00"},
    )
    run = automation_run(automation_id=automation.pk, slot=timezone.now(), version=1)
    assert run.status == "skipped" and run.conversation_id is None
    assert not Conversation.objects.exists()
