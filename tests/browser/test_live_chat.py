"""Replies that survive and pages in step, in a real browser against live daphne: a reload in
the middle of a reply goes on from the text so far; a second tab shows what the first sends; an
approval decided in one tab changes its card in the other. The fake model waits behind a
``Gate`` where the test needs the reply to be running, so a slow machine changes nothing."""

from __future__ import annotations

import re

import pytest

from agent.models import Message
from tests.agent.fake_openai import Gate, chunk, events, text
from tests.browser.test_chat_page import CONVERSATION_URL, say, use_fake_model
from tests.waiting import wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]

STREAMING = re.compile(r"\bstreaming\b")


def test_a_reload_mid_reply_shows_the_text_so_far_then_the_rest_then_complete(
    signed_in, fake_openai
):
    from playwright.sync_api import expect

    use_fake_model(fake_openai)
    gate = Gate()
    fake_openai.script(
        events(
            chunk({"role": "assistant", "content": "The first half,"}),
            gate,
            chunk({"content": " and the second half."}),
        )
    )
    page = signed_in
    page.reload()
    say(page, "tell me in two halves")
    expect(page.locator(".msg.assistant").last).to_contain_text("The first half,")
    expect(page).to_have_url(CONVERSATION_URL)

    page.reload()  # the page goes away; the reply does not
    reply = page.locator(".msg.assistant").last
    expect(reply).to_contain_text("The first half,")  # what was said before the reload
    expect(reply).to_have_class(STREAMING)
    expect(reply).not_to_contain_text("second half")
    expect(page.get_by_role("button", name="Stop")).to_be_visible()
    gate.opened.set()
    expect(reply).to_have_text(re.compile(r"^The first half, and the second half\."))
    expect(reply).to_have_attribute("data-status", "complete")
    expect(reply).not_to_have_class(STREAMING)
    expect(page.get_by_role("button", name="Send")).to_be_visible()
    saved = Message.objects.get(role="assistant")
    assert (saved.status, saved.content) == ("complete", "The first half, and the second half.")
    assert page.csp_violations == []


def test_a_reload_mid_reply_can_still_stop_it(signed_in, fake_openai):
    from playwright.sync_api import expect

    use_fake_model(fake_openai)
    gate = Gate()
    fake_openai.script(events(chunk({"role": "assistant", "content": "Going on"}), gate))
    page = signed_in
    page.reload()
    say(page, "go on and on")
    expect(page.locator(".msg.assistant").last).to_contain_text("Going on")
    page.reload()
    reply = page.locator(".msg.assistant").last
    expect(reply).to_have_class(STREAMING)
    page.get_by_role("button", name="Stop").click()
    expect(reply).to_contain_text("Stopped")
    expect(reply).to_contain_text("Going on")
    wait_for(lambda: Message.objects.get(role="assistant").status == "cancelled", "the cancel")
    gate.opened.set()


def test_enter_while_a_reply_streams_says_to_wait_or_stop_and_keeps_the_text(
    signed_in, fake_openai
):
    from playwright.sync_api import expect

    use_fake_model(fake_openai)
    gate = Gate()
    fake_openai.script(events(chunk({"role": "assistant", "content": "Thinking"}), gate))
    fake_openai.script(text("Here you are."))
    page = signed_in
    page.reload()
    say(page, "first question")
    expect(page.locator(".msg.assistant").last).to_contain_text("Thinking")

    box = page.get_by_label("Message")
    box.fill("second question")
    box.press("Enter")
    expect(page.locator("#status")).to_have_text(re.compile(r"wait for it, or press Stop"))
    expect(box).to_have_value("second question")  # nothing lost, nothing sent
    gate.opened.set()
    expect(page.get_by_role("button", name="Send")).to_be_visible()
    expect(page.locator("#status")).to_have_text("")
    box.press("Enter")
    expect(page.locator(".msg.user").last).to_have_text(re.compile("second question"))
    assert page.csp_violations == []


def test_a_message_sent_in_one_tab_appears_in_the_other(signed_in, fake_openai):
    from playwright.sync_api import expect

    use_fake_model(fake_openai)
    gate = Gate()
    fake_openai.script(
        text("Hello there."),
        events(
            chunk({"role": "assistant", "content": "Counting:"}),
            gate,
            chunk({"content": " 1, 2, 3."}),
        ),
    )
    first = signed_in
    first.reload()
    say(first, "hello")
    expect(first.locator(".msg.assistant").last).to_contain_text("Hello there.")
    expect(first).to_have_url(CONVERSATION_URL)

    second = first.context.new_page()  # the same owner, a second tab on the conversation
    second.goto(first.url)
    expect(second.locator(".msg.assistant")).to_have_count(1)
    expect(second.locator("#notifications")).to_have_attribute("data-live", "true")

    say(first, "count to three")
    expect(second.locator(".msg.user .body")).to_have_text(["hello", "count to three"])
    shown = second.locator(".msg.assistant").last
    expect(shown).to_contain_text("Counting:")  # followed live, while it streams
    expect(shown).to_have_class(STREAMING)
    gate.opened.set()
    expect(shown).to_have_text(re.compile(r"^Counting: 1, 2, 3\."))
    expect(shown).to_have_attribute("data-status", "complete")

    # A rename and a delete in the first tab show in the second, title, list and all.
    first.get_by_role("button", name="Rename").click()
    first.get_by_label("Conversation title").fill("Counting lesson")
    first.get_by_label("Conversation title").press("Enter")
    expect(second.get_by_role("heading", level=1)).to_have_text("Counting lesson")
    expect(second.locator("#conversation-list a")).to_have_text(["Counting lesson"])
    first.once("dialog", lambda dialog: dialog.accept())
    first.get_by_role("button", name="Delete").click()
    expect(second.locator("#conversation-list a")).to_have_count(0)
    expect(second.locator(".msg")).to_have_count(0)
    expect(second.locator("#status")).to_contain_text("moved to the bin")
    second.close()


def test_approving_in_one_tab_changes_the_card_in_the_other(signed_in, live_server_url):
    from playwright.sync_api import expect

    first = signed_in
    say(first, "add a task to file taxes")
    expect(first.locator(".msg.assistant").last).to_contain_text("File taxes")
    say(first, "delete the task file taxes")
    card = first.locator(".approval").last
    expect(card).to_contain_text("Waiting for you")

    second = first.context.new_page()
    second.goto(first.url)
    other = second.locator(".approval").last
    expect(other).to_contain_text("Waiting for you")
    expect(second.locator("#notifications")).to_have_attribute("data-live", "true")

    card.get_by_role("button", name="Approve").click()
    expect(card).to_contain_text("Done")
    expect(other).to_contain_text("Done")  # no reload
    expect(other.get_by_role("button", name="Approve")).to_have_count(0)
    second.close()
