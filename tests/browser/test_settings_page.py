"""The settings page in Chromium against the live daphne: the time zone taken from the browser
and saved (the page and the header follow it), and Test connection against a real
OpenAI-compatible server (the fake one) with unsaved settings."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.agent.fake_openai import text
from tests.browser.conftest import log_in
from tests.conftest import OWNER_PASSWORD

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]
BASE = Path(__file__).resolve().parents[2] / "templates" / "base.html"


def settings_via_api(url: str) -> dict:
    with httpx.Client(base_url=url) as client:
        client.post("/api/auth/login", json={"username": "owner", "password": OWNER_PASSWORD})
        return client.get("/api/settings").json()


def test_the_browser_s_zone_is_chosen_saved_and_followed(new_page, live_server_url):
    from playwright.sync_api import expect

    page = new_page(time_zone="Pacific/Auckland")
    log_in(page, live_server_url)
    # The first signed-in page saves the browser's zone and reloads (static/talorys/js/
    # first-run.js): once it has, so that its reload cannot land on the form below.
    expect(page.locator("body")).to_have_attribute("data-time-zone-confirmed", "true")
    page.goto(f"{live_server_url}/settings/")
    # Already the browser's zone: no button that would change nothing, a line saying so.
    use_zone = page.get_by_role("button", name="Use this browser's zone")
    expect(use_zone).to_be_hidden()
    expect(page.locator("#browser-zone-status")).to_have_text("This is this browser's zone.")

    page.get_by_role("combobox", name="Time zone").select_option("Europe/Lisbon")
    use_zone.click()
    expect(page.get_by_role("combobox", name="Time zone")).to_have_value("Pacific/Auckland")
    page.get_by_role("button", name="Save time zone").click()

    expect(page.locator(".flash")).to_contain_text("Time zone saved.")
    expect(page.locator("#current-zone")).to_have_text("Pacific/Auckland")
    assert page.evaluate("document.body.dataset.timeZone") == "Pacific/Auckland"
    saved = settings_via_api(live_server_url)
    assert (saved["time_zone"], saved["time_zone_confirmed"]) == ("Pacific/Auckland", True)

    page.get_by_role("combobox", name="Time zone").select_option("Europe/Lisbon")
    page.get_by_role("button", name="Save time zone").click()
    expect(page.locator("#current-zone")).to_have_text("Europe/Lisbon")
    assert settings_via_api(live_server_url)["time_zone"] == "Europe/Lisbon"
    assert page.csp_violations == []


def test_test_connection_reaches_the_model_server_with_unsaved_settings(
    signed_in, live_server_url, fake_openai
):
    from playwright.sync_api import expect

    fake_openai.script(text("OK"))
    page = signed_in
    page.goto(f"{live_server_url}/settings/#model")
    page.get_by_label("Server URL", exact=True).fill(fake_openai.base_url)
    page.get_by_label("Model", exact=True).fill("fake-model")

    page.get_by_role("button", name="Test connection").click()

    result = page.locator("#test-result")
    expect(result).to_contain_text("Connected.")
    expect(result).to_contain_text("It replied: OK")
    assert fake_openai.requests[0]["model"] == "fake-model"
    assert settings_via_api(live_server_url)["model_base_url"] == ""  # tested, not saved
    assert page.csp_violations == []


@pytest.mark.skipif(
    "first-run.js" not in BASE.read_text(), reason="base.html does not load first-run.js yet"
)
def test_the_first_run_takes_the_browser_s_zone(new_page, live_server_url):
    from playwright.sync_api import expect

    page = new_page(time_zone="America/Chicago")
    log_in(page, live_server_url)

    expect(page.locator("body")).to_have_attribute("data-time-zone", "America/Chicago")
    saved = settings_via_api(live_server_url)
    assert (saved["time_zone"], saved["time_zone_confirmed"]) == ("America/Chicago", True)
    page.goto(f"{live_server_url}/settings/")
    expect(page.locator("#current-zone")).to_have_text("America/Chicago")
    assert page.csp_violations == []


def test_the_client_and_calendar_addresses_are_copied_to_the_clipboard(signed_in, live_server_url):
    from playwright.sync_api import expect

    page = signed_in
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server_url)
    page.goto(f"{live_server_url}/settings/#tokens")
    calendar = page.locator("#calendar-url").inner_text()
    for label, url in (
        ("Copy the MCP server URL", f"{live_server_url}/mcp"),
        ("Copy the OpenAI-compatible base URL", f"{live_server_url}/v1"),
        ("Copy the calendar feed's address", calendar),
    ):
        button = page.get_by_role("button", name=label)
        assert button.get_attribute("data-copy") == url
        button.click()
        expect(button).to_have_text("Copied")
        assert page.evaluate("navigator.clipboard.readText()") == url
    assert page.csp_violations == []


def test_a_new_calendar_address_is_made_only_once_confirmed(signed_in, live_server_url):
    from playwright.sync_api import expect

    page = signed_in
    page.goto(f"{live_server_url}/settings/#calendar")
    url = page.locator("#calendar-url").inner_text()
    subscribe = page.get_by_role("link", name="Subscribe in a calendar app")
    expect(subscribe).to_have_attribute("href", "webcal://" + url.split("://", 1)[1])

    page.once("dialog", lambda dialog: dialog.dismiss())
    page.get_by_role("button", name="Make a new address").click()
    page.wait_for_timeout(500)
    expect(page.locator("#calendar-url")).to_have_text(url)  # kept: the old one still works

    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Make a new address").click()
    expect(page.locator("#calendar-url")).not_to_have_text(url)
    assert page.csp_violations == []
