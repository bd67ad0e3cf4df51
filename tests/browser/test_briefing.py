"""A scheduled prompt's briefing in a real browser: the bell shows it rendered (headings, bold,
a table; no raw Markdown), its title opens the run's conversation, where the briefing is a
reply like any other and the owner answers it."""

from __future__ import annotations

import pytest

from agent.automation_conversations import conversation_from_automation
from talorys.notifications import services as notify
from tests.agent.fake_openai import text
from tests.browser.test_chat_page import say, use_fake_model
from tests.browser.test_notifications import in_a_thread

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]

BRIEFING = (
    "## Today\n\n- **Dentist** at 10:00\n- Call Sam\n\n| task | due |\n| --- | --- |\n| Tax | Fri |"
)


def briefing_arrives() -> int:
    conversation = conversation_from_automation(
        title="Morning briefing · 4 Dec 2026",
        prompt="Brief me on today.",
        reply=BRIEFING,
        tool_activity=[],
    )
    notify.notification_send(
        title="Morning briefing",
        body=BRIEFING,
        kind="automation",
        source=f"conversation:{conversation.pk}",
    )
    return conversation.pk


def test_the_bell_shows_the_briefing_rendered_and_opens_its_conversation(
    signed_in, live_server_url, fake_openai
):
    from playwright.sync_api import expect

    page = signed_in
    conversation_id = in_a_thread(briefing_arrives)
    page.locator("#notif-button").click()
    item = page.locator("#notif-list > li").filter(has_text="Morning briefing")
    expect(item.locator(".body h2")).to_have_text("Today")
    expect(item.locator(".body strong")).to_have_text("Dentist")
    expect(item.locator(".body td")).to_have_text(["Tax", "Fri"])
    shown = item.inner_text()
    assert "##" not in shown and "**" not in shown and "| Tax" not in shown

    item.get_by_role("link", name="Morning briefing").click()
    page.wait_for_url(f"{live_server_url}/c/{conversation_id}/")
    expect(page.locator(".msg.user")).to_contain_text("Brief me on today.")
    reply = page.locator(".msg.assistant .body.md")
    expect(reply.locator("h2")).to_have_text("Today")
    expect(reply.locator("table td")).to_have_text(["Tax", "Fri"])
    expect(page.locator("#conversation-list a[aria-current=page]")).to_contain_text("Scheduled")

    # The owner answers it like any chat.
    use_fake_model(fake_openai)
    fake_openai.script(text("The dentist moved to **Monday**."))
    say(page, "Move the dentist to Monday")
    expect(page.locator(".msg.assistant .body.md").last.locator("strong")).to_have_text("Monday")
    sent = [m["content"] for m in fake_openai.requests[-1]["messages"][1:]]
    assert sent == ["Brief me on today.", BRIEFING, "Move the dentist to Monday"]
    assert page.csp_violations == []
