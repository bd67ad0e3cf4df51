"""The automation form in a real browser: the fields follow the kind of schedule, the next runs
follow the fields as the owner types, and the automation made runs at the owner's wall-clock
time in the owner's zone (not the browser's)."""

from __future__ import annotations

import re
from zoneinfo import ZoneInfo

import pytest

from automations.models import Automation
from talorys.owner.services.settings import owner_settings_update

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]


def test_owner_creates_a_daily_automation_and_sees_its_next_run_in_their_zone(
    new_page, live_server_url
):
    from playwright.sync_api import expect

    from tests.browser.conftest import log_in

    owner_settings_update(time_zone="Asia/Tokyo")
    # The browser is elsewhere: the page must still speak the owner's zone.
    page = new_page(time_zone="America/New_York")
    log_in(page, live_server_url)
    page.goto(f"{live_server_url}/automations/")
    page.get_by_role("link", name="New automation").click()

    page.get_by_label("Name").fill("Stretch")
    page.get_by_label("Reminder: a notification with your text").check()
    page.get_by_label("Text or prompt").fill("Stand up and stretch")
    days = page.get_by_role("group", name="Days of the week")
    expect(days).to_be_hidden()
    page.get_by_label("Repeats").select_option("weekly")
    expect(days).to_be_visible()
    page.get_by_label("Repeats").select_option("daily")
    expect(days).to_be_hidden()
    page.get_by_label("Time").fill("08:30")
    preview = page.locator("#preview-runs li")
    expect(page.locator("#preview-text")).to_have_text("every day at 08:30 (Asia/Tokyo)")
    expect(preview).to_have_count(5)
    expect(preview.first).to_contain_text("08:30")
    page.get_by_role("button", name="Create").click()

    expect(page).to_have_url(re.compile(r"/automations/\d+/$"))
    automation = Automation.objects.get(name="Stretch")
    tokyo = automation.next_run_at.astimezone(ZoneInfo("Asia/Tokyo"))
    assert tokyo.strftime("%H:%M") == "08:30"
    expect(page.locator("#next-run")).to_have_text(tokyo.strftime("%-d %b %Y, 08:30"))
    expect(page.locator("#schedule-text")).to_have_text("every day at 08:30 (Asia/Tokyo)")
    page.get_by_role("link", name="Automations", exact=True).first.click()
    expect(page.get_by_role("row", name=re.compile("Stretch"))).to_contain_text("Active")
    assert page.csp_violations == []
