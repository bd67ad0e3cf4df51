"""Times and states in Chromium against the live daphne: one time format on the bell, a
page and the admin, in the owner's zone (not the browser's); the "Active" pill on one line at
1280 px; "Notifications" once in the header, the bell still named on its own."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest
from django.utils import timezone

from automations.services.crud import automation_create
from talorys.notifications.models import Notification
from talorys.notifications.services import notification_create
from talorys.owner.services.settings import owner_settings_update
from tests.browser.conftest import log_in

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]


def test_the_bell_a_page_and_the_admin_show_one_time_in_the_owner_zone(new_page, live_server_url):
    from playwright.sync_api import expect

    owner_settings_update(time_zone="Pacific/Auckland")
    made = notification_create(title="Call Sam")
    # Four days ago: older than "yesterday", so shown in full on the page and the bell.
    at = (
        (timezone.now() - dt.timedelta(days=4))
        .astimezone(dt.UTC)
        .replace(hour=9, minute=14, second=0, microsecond=0)
    )
    Notification.objects.filter(pk=made.pk).update(created_at=at)
    local = at.astimezone(ZoneInfo("Pacific/Auckland"))
    expected = f"{local.day} {local:%b %Y, %H:%M}"  # "28 Nov 2026, 22:14"

    # The browser is in New York: the scripts must use the owner's zone, not this one.
    page = new_page(time_zone="America/New_York")
    log_in(page, live_server_url)
    page.goto(f"{live_server_url}/notifications/")
    on_page = page.locator("main time").first
    expect(on_page).to_have_text(expected)

    page.get_by_role("button", name="Latest notifications").click()
    on_bell = page.locator("#notif-list time").first
    expect(on_bell).to_have_text(expected)
    assert on_bell.get_attribute("title") == on_page.get_attribute("title") == expected

    page.goto(f"{live_server_url}/admin/notifications/notification/")
    expect(page.locator("#result_list")).to_contain_text(expected)
    assert page.csp_violations == []


def test_the_active_pill_stays_on_one_line_at_1280_px(signed_in, live_server_url):
    automation_create(
        name="Stretch and drink a glass of water before the afternoon meetings",
        kind="reminder",
        message="Stand up, stretch, drink a glass of water and look out of the window " * 2,
        schedule={"type": "weekly", "days": ["mon", "tue", "wed", "thu", "fri"], "time": "15:30"},
    )
    page = signed_in
    assert page.viewport_size["width"] == 1280
    page.goto(f"{live_server_url}/automations/")

    pill = page.locator(".automations-table .tag", has_text="Active").first
    box = pill.bounding_box()
    font = float(pill.evaluate("el => parseFloat(getComputedStyle(el).fontSize)"))
    assert pill.inner_text() == "Active"
    assert box is not None and box["height"] < 2 * font, box  # one line, not "Acti/ve"


def test_the_header_says_notifications_once_and_the_bell_has_its_own_name(
    signed_in, live_server_url
):
    page = signed_in
    page.goto(f"{live_server_url}/tasks/")

    # The words a sighted owner sees in the header (a visually hidden label is 1 px wide).
    seen = page.evaluate(
        """() => {
          const words = [];
          const walk = document.createTreeWalker(document.querySelector("header.top"),
            NodeFilter.SHOW_TEXT);
          while (walk.nextNode()) {
            const box = walk.currentNode.parentElement.getBoundingClientRect();
            if (box.width > 1 && box.height > 1) words.push(walk.currentNode.textContent);
          }
          return words.join(" ");
        }"""
    )
    assert seen.lower().count("notifications") == 1, seen
    header = page.locator("header.top")
    assert header.get_by_role("link", name="Notifications", exact=True).count() == 1
    assert header.get_by_role("button", name="Latest notifications").count() == 1
    assert header.get_by_role("button", name="Notifications", exact=True).count() == 0


def test_the_script_formats_as_the_pages_do(new_page, live_server_url):
    """static/talorys/js/time.js against talorys/lib/timefmt.py, the same instants and now."""
    from talorys.lib.timefmt import format_datetime, format_relative

    zone = ZoneInfo("Pacific/Auckland")
    owner_settings_update(time_zone="Pacific/Auckland")
    now = dt.datetime(2026, 12, 1, 22, 14, 30, tzinfo=zone)
    offsets = [-20, -300, 3540, -3 * 3600, -23 * 3600, 3 * 3600, -3 * 86400, 40 * 86400]
    instants = [now + dt.timedelta(seconds=s) for s in offsets]
    with timezone.override(zone):
        python = [[format_relative(t, now=now), format_datetime(t)] for t in instants]

    page = new_page(time_zone="America/New_York")
    log_in(page, live_server_url)
    script = page.evaluate(
        """async ([now, instants]) => {
          const t = await import("/static/talorys/js/time.js");
          return instants.map((iso) => [t.formatRelative(iso, new Date(now)), t.formatFull(iso)]);
        }""",
        [now.isoformat(), [t.isoformat() for t in instants]],
    )
    assert script == python
