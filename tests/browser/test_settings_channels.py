"""The channels card on /settings/ in Chromium against the live daphne, with a real JSON webhook
receiver on 127.0.0.1 in place of the service: a bad address is refused by its field with what
was typed kept, a good one is added and Send a test reaches the receiver, a failing test shows
its error, kinds and on/off are edited with the address kept, the row is deleted after a
confirm; the address's secret part is never in the page, its source or the API's answers; the
card passes axe (light and dark) and fits a phone."""

from __future__ import annotations

import httpx
import pytest

from talorys.notifications.models import Channel
from tests.browser.conftest import log_in
from tests.browser.test_accessibility import axe_source, violations
from tests.conftest import OWNER_PASSWORD
from tests.notifications.servers import Receiver

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]
SECRET = "t0ken-in-the-path-7731"


@pytest.fixture
def webhook():
    receiver = Receiver()
    yield receiver
    receiver.stop()


def create_via_api(server: str, **channel) -> dict:
    with httpx.Client(base_url=server) as client:
        login = client.post(
            "/api/auth/login", json={"username": "owner", "password": OWNER_PASSWORD}
        )
        client.headers["X-CSRFToken"] = login.json()["csrf_token"]
        created = client.post("/api/channels", json=channel)
        assert created.status_code == 201, created.text
        return created.json()


def no_secret_anywhere(page, url: str) -> None:
    """Not in the live page, nor in /settings/'s source, nor in what the API answers."""
    assert SECRET not in page.content()
    assert SECRET not in page.request.get(f"{url}/settings/").text()
    assert SECRET not in page.request.get(f"{url}/api/channels").text()


def add(form, name: str, address: str) -> None:
    form.get_by_label("Name").fill(name)
    form.get_by_label("Address (Apprise URL)").fill(address)
    form.get_by_role("button", name="Add the channel").click()


def test_a_channel_is_added_tested_edited_and_deleted(signed_in, live_server_url, webhook):
    from playwright.sync_api import expect

    page = signed_in
    page.goto(f"{live_server_url}/settings/#channels")
    form = page.locator("#channel-form")
    status = page.locator("#channels-status")
    expect(status).to_contain_text("No channels yet")
    address = form.get_by_label("Address (Apprise URL)")

    add(form, "Hook", "https://example.org/not-apprise")
    expect(page.locator("#channel-url-error")).to_contain_text("not an address Apprise can send")
    expect(page.locator("#channel-form-error")).to_contain_text("Not saved:")
    expect(address).to_have_value("https://example.org/not-apprise")
    expect(address).to_be_focused()
    expect(address).to_have_attribute("aria-invalid", "true")
    expect(form.get_by_label("Name")).to_have_value("Hook")
    assert not Channel.objects.exists()

    url = f"json://127.0.0.1:{webhook.port}/hook/{SECRET}"
    add(form, "Hook", url)
    row = page.locator("#channel-list > li", has_text="Hook")
    expect(row.locator(".channel-url")).to_have_text(f"json://127.0.0.1:{webhook.port}/…")
    expect(row).to_contain_text("JSON")
    expect(row).to_contain_text("Gets every kind of notification.")
    expect(row).to_contain_text("Nothing sent yet.")
    expect(status).to_contain_text("“Hook” added.")
    expect(address).to_have_value("")
    expect(page.locator("#channel-url-error")).to_be_empty()
    no_secret_anywhere(page, live_server_url)

    row.get_by_role("button", name="Send a test").click()
    expect(row.get_by_role("status")).to_have_text("Sent")
    expect(row.locator(".channel-state")).to_contain_text("Last delivered")
    assert webhook.received[0]["title"] == "Talorys test"
    assert webhook.paths == [f"/hook/{SECRET}"]

    webhook.answers = [500]
    row.get_by_role("button", name="Send a test").click()
    expect(row.get_by_role("status")).to_contain_text("Not sent:")
    expect(row.locator(".channel-state.error")).to_contain_text("Last failed")
    expect(row.locator(".channel-state.error")).to_contain_text("500")
    row.get_by_role("button", name="Send a test").click()  # delivered again: the newer wins
    expect(row.get_by_role("status")).to_have_text("Sent")
    expect(row.locator(".channel-state")).to_contain_text("Last delivered")
    expect(row.locator(".channel-state.error")).to_have_count(0)
    assert len(webhook.received) == 3

    # The same name (any case) is a 409, shown by the name field.
    add(form, "HOOK", "json://127.0.0.1:9/other")
    expect(page.locator("#channel-name-error")).to_contain_text("exists already")
    expect(form.get_by_label("Name")).to_be_focused()
    expect(address).to_have_value("json://127.0.0.1:9/other")
    assert Channel.objects.count() == 1

    row.get_by_role("button", name="Edit").click()
    edit = row.get_by_role("form", name="Edit the channel “Hook”")
    expect(edit.get_by_label("Name")).to_be_focused()
    new_address = edit.get_by_label("New address")
    expect(new_address).to_have_value("")
    expect(new_address).to_have_accessible_description(
        f"Leave it empty to keep the current address (json://127.0.0.1:{webhook.port}/…)."
    )
    new_address.fill("nonsense://x")
    edit.get_by_role("button", name="Save").click()
    expect(edit.locator(".field-error")).to_contain_text(["not an address Apprise can send"])
    expect(new_address).to_be_focused()
    expect(new_address).to_have_value("nonsense://x")
    assert Channel.objects.get().url == url

    new_address.fill("")
    edit.get_by_label("Digests").uncheck()
    edit.get_by_label("Other notices").uncheck()
    edit.get_by_label("On: send notifications to this channel").uncheck()
    edit.get_by_role("button", name="Save").click()
    expect(row).to_contain_text("Gets: Reminders, Automation results, Approvals, Failures.")
    expect(row.locator(".tag.warn")).to_have_text("off")
    expect(row.get_by_role("button", name="Edit")).to_be_focused()
    saved = Channel.objects.get()
    assert (saved.kinds, saved.enabled, saved.url) == (
        ["reminder", "automation", "approval", "error"],
        False,
        url,
    )
    no_secret_anywhere(page, live_server_url)

    page.once("dialog", lambda dialog: dialog.dismiss())
    row.get_by_role("button", name="Delete").click()
    expect(row).to_be_visible()
    assert Channel.objects.exists()
    page.once("dialog", lambda dialog: dialog.accept())
    row.get_by_role("button", name="Delete").click()
    expect(page.locator("#channel-list > li")).to_have_count(0)
    expect(status).to_contain_text("“Hook” deleted.")
    assert not Channel.objects.exists()
    assert page.csp_violations == []


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_card_with_a_failing_channel_open_for_editing_passes_axe(
    new_page, live_server_url, scheme
):
    from playwright.sync_api import expect

    create_via_api(live_server_url, name="Down", url=f"json://127.0.0.1:9/{SECRET}")
    page = new_page()
    page.emulate_media(color_scheme=scheme)
    log_in(page, live_server_url)
    page.goto(f"{live_server_url}/settings/#channels")
    row = page.locator("#channel-list > li", has_text="Down")
    row.get_by_role("button", name="Send a test").click()  # nothing listens on port 9
    expect(row.locator(".channel-state.error")).to_contain_text("Last failed")
    row.get_by_role("button", name="Edit").click()
    row.get_by_label("New address").fill("nonsense://x")
    row.get_by_role("button", name="Save").click()
    expect(row.locator(".form-error")).to_contain_text("Not saved:")
    add(page.locator("#channel-form"), "", "")
    expect(page.locator("#channel-name-error")).not_to_be_empty()
    assert violations(page, axe_source()) == []
    assert SECRET not in page.content()
    assert page.csp_violations == []


def test_the_card_fits_a_phone(new_page, live_server_url):
    from playwright.sync_api import expect

    long_name = "A-channel-name-without-any-space-" * 3
    create_via_api(live_server_url, name=long_name[:100], url="ntfy://127.0.0.1:9/talorys")
    page = new_page({"width": 360, "height": 740}, mobile=True)
    log_in(page, live_server_url)
    page.goto(f"{live_server_url}/settings/#channels")
    row = page.locator("#channel-list > li").first
    row.get_by_role("button", name="Edit").click()
    expect(row.get_by_label("New address")).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")
    assert page.csp_violations == []


def test_without_javascript_the_form_is_not_offered(browser, live_server_url):
    """It would send the address in a GET's query (the address bar, the server's log)."""
    from playwright.sync_api import expect

    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    log_in(page, live_server_url)
    page.goto(f"{live_server_url}/settings/#channels")
    expect(page.locator("#channels")).to_contain_text("this part of the page needs JavaScript")
    expect(page.locator("#channel-form")).to_be_hidden()
    context.close()
