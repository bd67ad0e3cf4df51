"""A scheduled prompt's answer (Markdown) is rendered wherever it is shown: the notifications
page, the run history (with a link to the run's conversation) and the notifications API the
bell and the toasts read; sanitised, never raw ``##``, ``**`` or pipes, never live HTML."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from agent.automation_conversations import conversation_from_automation
from automations.models import AutomationRun
from automations.services.crud import automation_create
from talorys.notifications import services

BRIEFING = (
    "## Today\n\n- **Dentist** at 10:00\n- Call Sam\n\n| task | due |\n| --- | --- |\n"
    "| Tax | Fri |\n\n<img src=x onerror=alert(1)>"
)


@pytest.fixture
def briefing(db) -> AutomationRun:
    automation = automation_create(
        name="Morning briefing",
        kind="agent_prompt",
        message="Brief me",
        schedule={"type": "daily", "time": "07:00"},
    )
    conversation = conversation_from_automation(
        title="Morning briefing", prompt="Brief me", reply=BRIEFING, tool_activity=[]
    )
    notification = services.notification_send(
        title="Morning briefing",
        body=BRIEFING,
        kind="automation",
        source=f"conversation:{conversation.pk}",
    )
    now = timezone.now() - dt.timedelta(hours=1)
    return AutomationRun.objects.create(
        automation=automation,
        slot=now,
        status="ok",
        started_at=now,
        finished_at=now,
        result=BRIEFING,
        notification=notification,
        conversation=conversation,
    )


def rendered(html: str) -> None:
    assert "<h2>Today</h2>" in html
    assert "<strong>Dentist</strong>" in html and "<td>Tax</td>" in html
    assert "## Today" not in html and "**Dentist**" not in html and "| Tax |" not in html
    assert "<img src=x" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html


def test_the_notifications_page_renders_the_briefing_and_opens_its_conversation(
    signed_in, briefing
):
    page = signed_in.get("/notifications/").content.decode()
    rendered(page)
    assert f'<a href="/c/{briefing.conversation_id}/">Morning briefing</a>' in page


def test_the_run_history_renders_the_briefing_and_links_its_conversation(signed_in, briefing):
    page = signed_in.get(f"/automations/{briefing.automation_id}/").content.decode()
    rendered(page)
    assert f'<a href="/c/{briefing.conversation_id}/">Open the conversation</a>' in page


def test_the_api_gives_the_bell_the_rendered_body(api, briefing):
    (item,) = api.get("/api/notifications").json()["items"]
    assert item["body"] == BRIEFING  # the Markdown, as it was written
    rendered(item["body_html"])
    assert item["source"] == f"conversation:{briefing.conversation_id}"
