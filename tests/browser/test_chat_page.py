"""The chat page in a real browser (Debian's Chromium through Playwright) against live daphne:
the demo model for the everyday path (send, reload, approvals), the fake OpenAI server for
Markdown, streaming with Stop, and Retry after a provider error; the phone's layout."""

from __future__ import annotations

import datetime as dt
import json
import re

import httpx
import pytest

from agent.models import Conversation, Message
from talorys.owner.selectors import owner_settings_get
from talorys.workspace.models import Note
from tests.agent.fake_openai import Stall, chunk, completion, error, events, text, tool_calls
from tests.conftest import OWNER_PASSWORD

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]

CONVERSATION_URL = re.compile(r"/c/(\d+)/$")


def tasks_via_api(url: str) -> list[dict]:
    with httpx.Client(base_url=url) as client:
        login = client.post(
            "/api/auth/login", json={"username": "owner", "password": OWNER_PASSWORD}
        )
        return client.get("/api/tasks", headers={"X-CSRFToken": login.json()["csrf_token"]}).json()[
            "items"
        ]


def use_fake_model(fake_openai) -> None:
    """The live daphne reads the model from OwnerSettings in the shared database."""
    row = owner_settings_get()
    row.model_base_url = fake_openai.base_url
    row.model_name = "fake-model"
    row.save()


def say(page, words: str) -> None:
    """Send as the owner does, once the previous reply is done (Send is back)."""
    from playwright.sync_api import expect

    expect(page.get_by_role("button", name="Send")).to_be_enabled()
    page.get_by_label("Message").fill(words)
    page.get_by_label("Message").press("Enter")


def test_owner_logs_in_chats_and_a_reload_keeps_the_conversation(page, live_server_url):
    from playwright.sync_api import expect

    page.goto(f"{live_server_url}/")
    expect(page).to_have_url(re.compile(r"/login/"))
    page.get_by_label("Username").fill("owner")
    page.get_by_label("Password").fill(OWNER_PASSWORD)
    page.get_by_role("button", name="Log in").click()

    banner = page.locator("#demo-banner")
    expect(banner).to_be_visible()
    expect(banner.get_by_role("link", name="Set a model server in the settings")).to_have_attribute(
        "href", "/settings/"
    )
    expect(page.get_by_role("heading", name="Hello! What can I do for you?")).to_be_visible()
    expect(page.get_by_label("Message")).to_be_focused()

    page.get_by_role("button", name="Add a task to buy oat milk").click()
    reply = page.locator(".msg.assistant").last
    expect(reply).to_contain_text("Buy oat milk")
    expect(reply.get_by_role("button", name="Copy the reply")).to_be_visible()
    expect(reply.locator(".changes")).to_contain_text("Buy oat milk")  # the turn's change
    expect(page).to_have_url(CONVERSATION_URL)
    expect(page.get_by_label("Message")).to_be_focused()
    expect(page.locator("#conversation-list a")).to_have_text(["Add task: buy oat milk"])
    expect(page.locator("#conversation-list h3")).to_have_text(["Today"])
    assert [t["title"] for t in tasks_via_api(live_server_url)] == ["Buy oat milk"]

    say(page, "what are my open tasks?")
    expect(page.locator(".msg.assistant")).to_have_count(2)
    expect(page.locator(".msg.assistant").last).to_contain_text("Buy oat milk")
    url = page.url
    page.reload()
    expect(page).to_have_url(url)
    expect(page.locator(".msg.user .body")).to_have_text(
        ["Add a task to buy oat milk", "what are my open tasks?"]
    )
    expect(page.locator(".msg.assistant")).to_have_count(2)
    expect(page.locator("#greeting")).to_be_hidden()
    expect(page.locator('#conversation-list a[aria-current="page"]')).to_have_count(1)

    page.get_by_role("button", name="New chat").click()
    expect(page).to_have_url(f"{live_server_url}/")
    expect(page.locator(".msg")).to_have_count(0)
    page.go_back()
    expect(page).to_have_url(url)
    expect(page.locator(".msg.user")).to_have_count(2)
    assert page.csp_violations == []


def test_owner_approves_a_deletion_sees_done_and_undoes_it(signed_in, live_server_url):
    """Watched from the chat, the proposal is not announced (the card is right there): its
    notification is only recorded, read; no toast, no unread count, no push, no channel."""
    from playwright.sync_api import expect

    from talorys.notifications.models import (
        Channel,
        ChannelDelivery,
        Notification,
        PushDelivery,
        PushSubscription,
    )

    page = signed_in
    PushSubscription.objects.create(endpoint="https://push.example/1", p256dh="k", auth="a")
    Channel.objects.create(name="Phone", url="json://127.0.0.1:9/", kinds=["approval"])
    say(page, "add a task to file taxes")
    expect(page.locator(".msg.assistant").last).to_contain_text("File taxes")
    say(page, "delete the task file taxes")
    card = page.locator(".approval").last
    expect(card).to_contain_text("Waiting for you")
    expect(card).to_contain_text("File taxes")
    expect(card).to_contain_text(re.compile(r"Expires in \d+ min"))
    assert len(tasks_via_api(live_server_url)) == 1  # nothing happens before approval
    recorded = Notification.objects.get(kind="approval")
    assert recorded.title.startswith("Waiting for your approval") and recorded.read_at is not None
    assert PushDelivery.objects.count() == 0 and ChannelDelivery.objects.count() == 0

    card.get_by_role("button", name="Approve").click()
    expect(card).to_contain_text("Done")
    assert tasks_via_api(live_server_url) == []
    # The page has heard of the decision (its rewritten notification), never of the proposal.
    page.locator("#notif-button").click()
    expect(page.locator("#notif-list li")).to_contain_text(["Approved and done"])
    expect(page.locator(".toast")).to_have_count(0)
    expect(page.locator("#notif-count")).to_be_hidden()

    card.get_by_role("button", name="Undo").click()
    expect(card).to_contain_text("Undone")
    expect(card.get_by_role("button")).to_have_count(0)
    assert [t["title"] for t in tasks_via_api(live_server_url)] == ["File taxes"]

    page.reload()  # a decided card, reopened, offers no buttons
    reopened = page.locator(".approval").last
    expect(reopened).to_contain_text("Undone")
    expect(reopened.get_by_role("button")).to_have_count(0)
    assert page.csp_violations == []


def test_a_rewrite_waits_with_its_diff_and_is_undone(signed_in, fake_openai):
    from playwright.sync_api import expect

    use_fake_model(fake_openai)
    note = Note.objects.create(title="Groceries", content="eggs and bread")
    rewrite = json.dumps({"note_id": note.pk, "content": "eggs and oat milk"})
    fake_openai.script(tool_calls(("rewrite_note", rewrite)), text("Approve it to apply."))
    page = signed_in
    page.reload()
    say(page, "swap the bread for oat milk")
    card = page.locator(".approval")
    expect(card).to_contain_text("Waiting for you")
    expect(card.locator(".diff del")).to_have_text(["bread"])
    expect(card.locator(".diff ins")).to_have_text(["oat milk"])
    card.get_by_role("button", name="Approve").click()
    expect(card).to_contain_text("Done")
    note.refresh_from_db()
    assert note.content == "eggs and oat milk"
    card.get_by_role("button", name="Undo").click()
    expect(card).to_contain_text("Undone")
    note.refresh_from_db()
    assert note.content == "eggs and bread"
    assert page.csp_violations == []


def test_markup_in_a_reply_is_inert_live_and_reloaded(signed_in, live_server_url):
    from playwright.sync_api import expect

    page = signed_in
    say(page, 'add a task to <img src=x onerror="document.title=1">')
    expect(page.locator(".msg.assistant").last).to_contain_text("<img src=x")
    stored = Conversation.objects.create(title="Stored <img src=x onerror=alert(1)>")
    Message.objects.create(conversation=stored, role="user", content="show me")
    Message.objects.create(
        conversation=stored,
        role="assistant",
        content='Here: <img src=x onerror="document.title=1"> <script>document.title=1</script>',
    )
    page.goto(f"{live_server_url}/c/{stored.pk}/")
    expect(page.locator(".msg.assistant")).to_contain_text("Here:")
    expect(page.locator("#thread-title")).to_have_text("Stored <img src=x onerror=alert(1)>")
    assert page.locator(".msg img, .msg script, #conversation-list img").count() == 0
    page.wait_for_timeout(200)
    assert page.title() != "1"
    assert page.csp_violations == []


def test_a_reply_is_rendered_as_markdown_with_copy_buttons(signed_in, fake_openai):
    from playwright.sync_api import expect

    use_fake_model(fake_openai)
    fake_openai.script(
        text(
            "## Autumn plan\n\nThis is **bold** and a [link](https://example.com).\n\n",
            "| Day | Task |\n| --- | --- |\n| Mon | Rake |\n\n",
            "```python\nprint('hi')\n```\n",
        )
    )
    fake_openai.script_json(completion(json.dumps({"title": "Autumn garden plan"})))
    page = signed_in
    page.reload()  # the settings changed after the page loaded: the banner goes
    expect(page.locator("#demo-banner")).to_be_hidden()
    say(page, "plan my autumn")
    expect(page.get_by_role("heading", level=1)).to_have_text("Autumn garden plan")
    expect(page.locator("#conversation-list a")).to_have_text(["Autumn garden plan"])
    body = page.locator(".msg.assistant .body.md")
    expect(body.locator("h2")).to_have_text("Autumn plan")
    expect(body.locator("strong")).to_have_text("bold")
    expect(body.locator("table th")).to_have_text(["Day", "Task"])
    expect(body.locator("pre")).to_contain_text("print('hi')")
    expect(body.locator("pre").get_by_role("button", name="Copy the code")).to_be_visible()
    link = body.get_by_role("link", name="link")
    expect(link).to_have_attribute("target", "_blank")
    expect(link).to_have_attribute("rel", re.compile(r"\bnoopener\b"))

    page.reload()  # the stored reply renders the same
    expect(page.locator(".msg.assistant .body.md h2")).to_have_text("Autumn plan")
    expect(page.locator(".msg.assistant .body.md table")).to_have_count(1)
    assert page.csp_violations == []


def test_a_streaming_reply_is_followed_stopped_with_escape_and_retried(signed_in, fake_openai):
    from playwright.sync_api import expect

    use_fake_model(fake_openai)
    opening = chunk({"role": "assistant", "content": "Once upon a time"})
    fake_openai.script(
        events(opening, Stall(30), chunk({"content": " never sent"})),
        text("A short story, told in full."),
    )
    page = signed_in
    page.reload()
    say(page, "tell me a story")
    reply = page.locator(".msg.assistant").last
    expect(reply).to_contain_text("Once upon a time")
    expect(reply).to_have_class(re.compile(r"\bstreaming\b"))
    stop = page.get_by_role("button", name="Stop")
    expect(stop).to_be_in_viewport()
    expect(page.get_by_role("button", name="Send")).to_be_hidden()

    page.keyboard.press("Escape")
    expect(reply).to_contain_text("Stopped")
    expect(reply).to_contain_text("Once upon a time")
    expect(stop).to_be_hidden()
    reply.get_by_role("button", name="Retry").click()
    expect(page.locator(".msg.assistant")).to_have_count(1)  # the stopped reply makes way
    expect(page.locator(".msg.assistant")).to_contain_text("A short story, told in full.")
    expect(page.locator(".msg.assistant")).not_to_contain_text("Stopped")
    assert page.csp_violations == []


def test_a_provider_error_shows_its_reason_in_the_bubble_and_retry_answers(signed_in, fake_openai):
    from playwright.sync_api import expect

    use_fake_model(fake_openai)
    fake_openai.script(error(500, "the model is overloaded"), text("Here you are."))
    page = signed_in
    page.reload()
    say(page, "hello")
    reply = page.locator(".msg.assistant").last
    expect(reply).to_have_attribute("data-status", "error")
    reason = reply.locator(".note")
    expect(reason).to_contain_text("500")
    stored = Message.objects.get(role="assistant")
    assert stored.status == "error"

    page.reload()  # the same, reloaded
    reply = page.locator(".msg.assistant").last
    expect(reply.locator(".note")).to_contain_text("500")
    reply.get_by_role("button", name="Retry").click()
    expect(page.locator(".msg.assistant")).to_have_count(1)
    expect(page.locator(".msg.assistant")).to_contain_text("Here you are.")
    expect(page.locator(".msg.assistant .note")).to_be_hidden()
    assert page.csp_violations == []


def test_regenerate_replaces_the_last_reply_and_edit_resends_the_last_message(
    signed_in, fake_openai
):
    from playwright.sync_api import expect

    use_fake_model(fake_openai)
    fake_openai.script(text("First answer."), text("Second answer."), text("Answer to the edit."))
    page = signed_in
    page.reload()
    say(page, "hello")
    replies = page.locator(".msg.assistant")
    expect(replies).to_have_text([re.compile("First answer.")])
    replies.get_by_role("button", name="Regenerate").click()
    expect(replies).to_have_text([re.compile("Second answer.")])
    page.reload()
    expect(replies).to_have_text([re.compile("Second answer.")])

    mine = page.locator(".msg.user")
    mine.get_by_role("button", name="Edit").click()
    editor = page.get_by_label("Edit your message")
    expect(editor).to_be_focused()
    expect(editor).to_have_value("hello")
    editor.fill("hello again")
    page.get_by_role("button", name="Save & resend").click()
    expect(mine.locator(".body")).to_have_text(["hello again"])
    expect(replies).to_have_text([re.compile("Answer to the edit.")])
    assert fake_openai.requests[-1]["messages"][-1]["content"] == "hello again"
    page.reload()
    expect(page.locator(".msg.user .body")).to_have_text(["hello again"])
    expect(replies).to_have_text([re.compile("Answer to the edit.")])
    assert page.csp_violations == []


def test_the_list_is_grouped_by_day_searched_renamed_and_deleted(signed_in, live_server_url):
    from playwright.sync_api import expect

    garden = Conversation.objects.create(title="Garden plans")
    Message.objects.create(conversation=garden, role="user", content="tulips or roses?")
    Conversation.objects.create(title="Tax return")
    old = Conversation.objects.create(title="Holiday packing")
    Conversation.objects.filter(pk=old.pk).update(
        updated_at=dt.datetime.now(dt.UTC) - dt.timedelta(days=20)
    )
    page = signed_in
    page.reload()
    links = page.locator("#conversation-list a")
    expect(page.locator("#conversation-list h3")).to_have_text(["Today", "Older"])
    expect(links).to_have_text(["Tax return", "Garden plans", "Holiday packing"])

    page.get_by_label("Search conversations").fill("tulips")  # in a message, not the title
    expect(links).to_have_text(["Garden plans"])
    links.first.click()
    expect(page).to_have_url(f"{live_server_url}/c/{garden.pk}/")
    expect(page.get_by_role("heading", level=1)).to_have_text("Garden plans")

    page.get_by_role("button", name="Rename").click()
    page.get_by_label("Conversation title").fill("Spring garden")
    page.get_by_label("Conversation title").press("Enter")
    expect(page.get_by_role("heading", level=1)).to_have_text("Spring garden")
    page.get_by_label("Search conversations").fill("")
    expect(links).to_have_text(["Tax return", "Spring garden", "Holiday packing"])

    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Delete").click()
    expect(page).to_have_url(f"{live_server_url}/")
    expect(links).to_have_text(["Tax return", "Holiday packing"])
    garden.refresh_from_db()
    assert garden.deleted_at is not None  # in the bin, not gone
    assert page.csp_violations == []


def test_on_a_phone_the_composer_stays_in_view_and_nothing_scrolls_sideways(
    signed_in_phone, live_server_url
):
    from playwright.sync_api import expect

    page = signed_in_phone
    convo = Conversation.objects.create(title="A long one")
    Conversation.objects.create(title="Another one")
    parent = None  # one chain, as the app writes it (agent/branches.py)
    for n in range(30):
        parent = Message.objects.create(
            conversation=convo, role="user", content=f"Question {n}", parent=parent
        )
        parent = Message.objects.create(
            conversation=convo,
            parent=parent,
            role="assistant",
            content=f"Answer {n}: " + "averyveryverylongwordwithoutanybreaks" * 8,
        )
    page.goto(f"{live_server_url}/c/{convo.pk}/")
    expect(page.locator(".msg.assistant")).to_have_count(30)
    expect(page.locator(".msg.assistant").last).to_be_in_viewport()  # opened at the latest
    composer = page.get_by_label("Message")
    expect(composer).to_be_in_viewport()
    expect(page.get_by_role("button", name="Send")).to_be_in_viewport()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390

    # The drawer: the list is out of the way until asked for.
    expect(page.locator("#conversation-list")).not_to_be_in_viewport()
    page.get_by_role("button", name="Chats").click()
    other = page.get_by_role("link", name="Another one")
    expect(other).to_be_in_viewport()
    other.click()
    expect(page).to_have_url(re.compile(rf"/c/{convo.pk + 1}/$"))
    expect(page.locator("#conversation-list")).not_to_be_in_viewport()
    page.go_back()
    expect(page.locator(".msg.assistant")).to_have_count(30)

    page.locator("#scroller").evaluate("(el) => { el.scrollTop = 0; }")
    expect(composer).to_be_in_viewport()  # pinned, whatever the thread's scroll
    say(page, "what are my open tasks?")
    expect(page.locator(".msg.assistant")).to_have_count(31)
    expect(page.locator(".msg.assistant").last).to_be_in_viewport()
    expect(composer).to_be_in_viewport()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert page.csp_violations == []


def test_at_360_px_the_page_has_no_horizontal_scroll(new_page, live_server_url):
    from tests.browser.conftest import log_in

    page = new_page({"width": 360, "height": 640}, mobile=True)
    log_in(page, live_server_url)
    say(page, "remember that " + "supercalifragilistic" * 10)
    page.locator(".msg.assistant .msg-actions button").first.wait_for()
    assert page.evaluate("document.documentElement.scrollWidth") <= 360
    assert page.csp_violations == []


def test_the_demo_notice_is_one_compact_line_that_scrolls_with_the_thread(
    signed_in, live_server_url
):
    from playwright.sync_api import expect

    page = signed_in
    banner = page.locator("#demo-banner")
    expect(banner).to_be_visible()
    assert banner.bounding_box()["height"] <= 40  # one line, not 90 px
    expect(banner.get_by_role("link", name="Set a model server in the settings")).to_be_visible()
    # Not pinned above the thread: it is part of what scrolls.
    assert page.locator("#scroller #demo-banner").count() == 1
    assert page.evaluate("getComputedStyle(document.getElementById('demo-banner')).position") in (
        "static",
        "relative",
    )


def test_a_finished_thread_opens_at_its_end_and_offers_jump_to_latest_when_scrolled_up(
    signed_in, live_server_url
):
    from playwright.sync_api import expect

    from agent.models import Conversation, Message

    convo = Conversation.objects.create(title="Long talk")
    for n in range(12):
        Message.objects.create(conversation=convo, role="user", content=f"question {n}")
        body = "\n\n".join(f"Paragraph {k} of answer {n}." for k in range(6))
        Message.objects.create(conversation=convo, role="assistant", content=body)
    page = signed_in
    page.goto(f"{live_server_url}/c/{convo.pk}/")
    last = page.locator(".msg.assistant").last
    expect(last).to_contain_text("Paragraph 5 of answer 11.")
    expect(last.get_by_text("Paragraph 5 of answer 11.")).to_be_in_viewport()
    jump = page.get_by_role("button", name="Jump to latest")
    expect(jump).to_be_hidden()

    page.locator("#scroller").evaluate("s => s.scrollTo(0, 0)")
    expect(jump).to_be_visible()  # no reply running, and still offered
    jump.click()
    expect(last.get_by_text("Paragraph 5 of answer 11.")).to_be_in_viewport()
    expect(jump).to_be_hidden()
