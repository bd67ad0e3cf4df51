"""The model picker in the chat's head, in a real browser against the fake model server (which
lists two models): picking one saves it, the next reply asks it, the list shows it, the header's
badge names the open conversation's model; on a phone
the head stays one row with a long model name, and axe finds nothing serious in it."""

from __future__ import annotations

import pytest

from agent.models import Conversation
from tests.agent.fake_openai import text
from tests.agent.test_runner import conversation_with
from tests.browser.test_accessibility import axe_source, violations
from tests.browser.test_chat_page import say, use_fake_model

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]

LONG = "openrouter/some-provider/a-rather-long-model-name-70b-instruct"


def test_picking_a_model_in_the_head_answers_the_next_reply_with_it(
    signed_in, live_server_url, fake_openai
):
    from playwright.sync_api import expect

    page = signed_in
    use_fake_model(fake_openai)
    page.reload()  # the new chat, now with a server that lists two models

    # A new chat: the choice goes with the first message.
    picker = page.get_by_label("Model for this conversation")
    expect(picker).to_have_value("")
    expect(picker.locator("option")).to_have_text(["Default (fake-model)", "fake-model-large"])
    picker.select_option("fake-model-large")
    fake_openai.script(text("The large one speaks."))
    say(page, "who are you?")
    expect(page.locator("#messages li").last).to_contain_text("The large one speaks.")
    assert fake_openai.requests[-1]["model"] == "fake-model-large"
    conversation = Conversation.objects.get()
    assert conversation.model == "fake-model-large"
    row = page.locator(f'#conversation-list a[data-id="{conversation.pk}"]')
    expect(row.locator(".model-badge")).to_have_text("fake-model-large")

    # An open conversation: the choice is saved at once, and kept over a reload.
    page.reload()
    picker = page.get_by_label("Model for this conversation")
    expect(picker).to_have_value("fake-model-large")
    picker.select_option("")
    expect(row.locator(".model-badge")).to_have_count(0)
    assert Conversation.objects.get().model == ""
    fake_openai.script(text("The default speaks."))
    say(page, "and now?")
    expect(page.locator("#messages li").last).to_contain_text("The default speaks.")
    assert fake_openai.requests[-1]["model"] == "fake-model"
    assert page.csp_violations == []


def test_the_header_badge_names_the_open_conversations_model(
    signed_in, live_server_url, fake_openai
):
    from playwright.sync_api import expect

    page = signed_in
    use_fake_model(fake_openai)
    large = conversation_with(("user", "hi"), ("assistant", "Hello!"), model="fake-model-large")
    default = conversation_with(("user", "yo"), ("assistant", "Hey!"))
    badge = page.locator("#model-badge")

    page.goto(f"{live_server_url}/c/{large.pk}/")
    expect(badge).to_have_text("fake-model-large")
    # Server-rendered so, not only once the script has run.
    html = page.request.get(f"{live_server_url}/c/{large.pk}/").text()
    assert 'title="The model that answers">fake-model-large</a>' in html

    page.locator(f'#conversation-list a[data-id="{default.pk}"]').click()
    expect(page.get_by_label("Model for this conversation")).to_have_value("")
    expect(badge).to_have_text("fake-model")
    page.locator(f'#conversation-list a[data-id="{large.pk}"]').click()
    expect(badge).to_have_text("fake-model-large")

    # Picking another model for the open conversation renames the badge too.
    page.get_by_label("Model for this conversation").select_option("")
    expect(badge).to_have_text("fake-model")
    page.locator("#new-chat").click()
    expect(badge).to_have_text("fake-model")
    assert page.csp_violations == []


def test_the_phone_head_stays_one_row_with_a_long_model_name(
    signed_in_phone, live_server_url, fake_openai
):
    from playwright.sync_api import expect

    page = signed_in_phone
    fake_openai.models = ["fake-model", LONG]
    use_fake_model(fake_openai)
    conversation = conversation_with(("user", "hi"), ("assistant", "Hello!"), model=LONG)
    page.goto(f"{live_server_url}/c/{conversation.pk}/")

    picker = page.get_by_label("Model for this conversation")
    expect(picker).to_have_value(LONG)
    head = page.locator(".thread-head").bounding_box()
    rename = page.get_by_role("button", name="Rename").bounding_box()
    title = page.get_by_role("heading", level=1).bounding_box()
    assert head is not None and rename is not None and title is not None
    assert head["height"] < 2 * rename["height"]  # one row: nothing wrapped below
    assert picker.bounding_box()["x"] + picker.bounding_box()["width"] <= rename["x"]
    assert title["width"] > 0
    assert head["width"] <= 390
    assert violations(page, axe_source()) == []  # the picker labelled, readable, in reach
