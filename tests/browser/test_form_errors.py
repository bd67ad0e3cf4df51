"""Refusals as the owner meets them, in Chromium against the live daphne: said in the page's
words (the field as the page labels it, what to do; no codes), at the top of the refused form
with its first field in error focused; the chat's composer counting toward the API's limit and
refusing an over-long message before sending; Retry only where a retry can succeed."""

from __future__ import annotations

import re

import pytest

from agent.models import Conversation, Message
from agent.services import MAX_MESSAGE_CHARS
from automations.models import Automation
from talorys.owner.selectors import owner_settings_get
from tests.agent.fake_openai import error
from tests.browser.test_accessibility import axe_source, violations

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]


def test_an_over_long_message_is_counted_and_refused_before_it_is_sent(signed_in):
    from playwright.sync_api import expect

    page = signed_in
    box = page.get_by_label("Message")
    counter = page.locator("#text-count")
    expect(page.get_by_role("button", name="Send")).to_be_enabled()
    box.fill("a" * 100)
    expect(counter).to_be_hidden()  # far from the limit: no counter

    box.fill("a" * (MAX_MESSAGE_CHARS - 10))
    expect(counter).to_be_visible()
    expect(counter).to_have_text("31,990 of 32,000 characters.")

    box.fill("a" * (MAX_MESSAGE_CHARS + 5))
    expect(counter).to_have_text("5 characters too long: 32,005 of 32,000.")
    expect(box).to_have_attribute("aria-invalid", "true")
    box.press("Enter")

    status = page.locator("#status")
    expect(status).to_contain_text("Not sent: your message is 5 characters too long")
    expect(status).to_contain_text("Shorten it")
    expect(page.locator(".msg")).to_have_count(0)  # nothing sent, no bubble, no Retry
    expect(page.get_by_role("button", name="Retry")).to_have_count(0)
    expect(box).to_have_value("a" * (MAX_MESSAGE_CHARS + 5))  # what was typed is kept
    assert not Message.objects.exists()
    assert not Conversation.objects.exists()

    box.fill("a" * 50)
    expect(counter).to_be_hidden()
    expect(box).not_to_have_attribute("aria-invalid", "true")
    assert page.csp_violations == []


def failed_reply(code: str, message: str) -> Conversation:
    conversation = Conversation.objects.create(title="Failed")
    Message.objects.create(conversation=conversation, role="user", content="hello")
    Message.objects.create(
        conversation=conversation,
        role="assistant",
        status="error",
        error_code=code,
        error_message=message,
    )
    return conversation


@pytest.mark.parametrize(
    ("code", "message", "shown", "retry"),
    [
        (
            "VALIDATION",
            "text is longer than 32000 characters.",
            "Your message is longer than 32000 characters: shorten it.",
            False,
        ),
        (
            "PROVIDER_AUTH",
            "The model server refused the API key (401).",
            "refused the API key",
            False,
        ),
        (
            "PROVIDER_TIMEOUT",
            "The model server went quiet for more than 120 s.",
            "went quiet",
            True,
        ),
        ("PROVIDER_BAD_RESPONSE", "The model server answered 502.", "answered 502", True),
    ],
)
def test_a_failed_reply_says_why_without_its_code_and_offers_retry_only_if_it_can_succeed(
    signed_in, live_server_url, code, message, shown, retry
):
    from playwright.sync_api import expect

    conversation = failed_reply(code, message)
    page = signed_in
    page.goto(f"{live_server_url}/c/{conversation.pk}/")
    reply = page.locator(".msg.assistant")
    expect(reply).to_have_attribute("data-status", "error")
    expect(reply.locator(".note")).to_contain_text(shown)
    expect(reply.locator(".note")).not_to_contain_text(code)  # the code is the script's
    expect(reply).to_have_attribute("data-error-code", code)
    expect(page.get_by_role("button", name="Regenerate")).to_have_count(0)
    expect(page.get_by_role("button", name="Retry")).to_have_count(1 if retry else 0)
    assert page.csp_violations == []


def test_a_refused_automation_says_so_at_the_top_and_focuses_the_field(signed_in, live_server_url):
    from playwright.sync_api import expect

    page = signed_in
    page.set_viewport_size({"width": 1280, "height": 600})  # the day's field below the fold
    page.goto(f"{live_server_url}/automations/new/")
    page.get_by_label("Name").fill("Pay the rent")
    page.get_by_label("Reminder: a notification with your text").check()
    page.get_by_label("Text or prompt").fill("Rent is due")
    page.get_by_label("Repeats").select_option("monthly")
    page.get_by_label("Day of the month").fill("-5")
    page.get_by_role("button", name="Create").click()

    alert = page.locator("form .form-problems")
    expect(alert).to_have_attribute("role", "alert")
    expect(alert).to_have_text("Not saved: one problem below. Fix it and save again.")
    day = page.get_by_label("Day of the month")
    expect(day).to_be_focused()
    expect(day).to_have_value("-5")  # kept as typed
    expect(day).to_have_attribute("aria-invalid", "true")
    error = page.locator(".field.invalid .error")
    expect(error).to_have_text("Day of the month must be 1 or more.")
    described = day.get_attribute("aria-describedby") or ""
    assert error.get_attribute("id") in described.split()
    expect(page.get_by_text("Input should")).to_have_count(0)
    assert not Automation.objects.exists()
    assert violations(page, axe_source()) == []
    assert page.csp_violations == []


def test_a_refused_settings_section_names_the_field_by_its_label_beside_it(
    signed_in, live_server_url
):
    from playwright.sync_api import expect

    page = signed_in
    page.goto(f"{live_server_url}/settings/")
    page.get_by_label("Server URL", exact=True).fill("ftp://models.example")
    page.get_by_label("Model", exact=True).fill("some-model")
    page.get_by_role("button", name="Save model provider").click()

    expect(page).to_have_url(re.compile(r"/settings/#model$"))
    problem = page.locator("#model .form-problems")
    expect(problem).to_have_attribute("role", "alert")
    expect(problem).to_have_text(
        "Server URL must start with http:// or https://, e.g. http://localhost:11434/v1."
    )
    expect(page.get_by_text("model_base_url")).to_have_count(0)
    url = page.get_by_label("Server URL", exact=True)
    expect(url).to_be_focused()
    expect(url).to_have_attribute("aria-invalid", "true")
    expect(url).to_have_attribute("aria-describedby", problem.get_attribute("id") or "-")
    assert owner_settings_get().model_base_url == ""  # nothing saved
    assert violations(page, axe_source()) == []
    assert page.csp_violations == []


def test_test_connection_says_why_it_failed_in_words_without_the_kind(
    signed_in, live_server_url, fake_openai
):
    from playwright.sync_api import expect

    fake_openai.script(error(500, "the model is overloaded"))
    page = signed_in
    page.goto(f"{live_server_url}/settings/#model")
    url = page.get_by_label("Server URL", exact=True)
    url.fill("ftp://models.example")
    page.get_by_label("Model", exact=True).fill("fake-model")
    page.get_by_role("button", name="Test connection").click()
    result = page.locator("#test-result")
    expect(result).to_contain_text(
        "Not tested. Server URL must start with http:// or https://, e.g. "
    )
    expect(result).not_to_contain_text("model_base_url")

    url.fill(fake_openai.base_url)
    page.get_by_role("button", name="Test connection").click()
    expect(result).to_contain_text("Failed.")
    expect(result).to_contain_text("500")
    expect(result).not_to_contain_text("bad_response")
    expect(result).to_have_attribute("data-kind", "bad_response")
    assert page.csp_violations == []
