"""The pages at a phone's width, 390×844: Esc closes the menu and gives the
focus back to its button; the menu and the bell's panel never show together; the demo notice is
one line and can be dismissed for the session; /tasks/ folds its filters behind "Filters";
/settings/ keeps the time zone inside its card; /tasks/, /settings/ and /api/docs never scroll
sideways."""

from __future__ import annotations

import pytest

from talorys.workspace.models import Task

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]

NO_SIDEWAYS = "document.documentElement.scrollWidth <= window.innerWidth"


def test_esc_closes_the_menu_and_the_bell_never_opens_over_it(signed_in_phone, live_server_url):
    from playwright.sync_api import expect

    page = signed_in_phone
    page.goto(f"{live_server_url}/tasks/")
    menu = page.get_by_role("button", name="Menu")
    nav = page.locator("#main-nav")
    bell = page.locator("#notif-button")
    panel = page.locator("#notif-panel")

    menu.click()
    expect(menu).to_have_attribute("aria-expanded", "true")
    expect(nav.get_by_role("link", name="Notes")).to_be_visible()
    page.keyboard.press("Escape")
    expect(menu).to_have_attribute("aria-expanded", "false")
    expect(nav).to_be_hidden()
    expect(menu).to_be_focused()

    menu.click()
    bell.click()  # the panel opens, the menu closes
    expect(panel).to_be_visible()
    expect(menu).to_have_attribute("aria-expanded", "false")
    expect(nav).to_be_hidden()
    menu.click()  # and the other way round
    expect(nav).to_be_visible()
    expect(panel).to_be_hidden()
    expect(bell).to_have_attribute("aria-expanded", "false")
    assert page.csp_violations == []


def test_the_demo_notice_is_one_line_and_dismissed_for_the_session(
    signed_in_phone, live_server_url
):
    from playwright.sync_api import expect

    page = signed_in_phone
    banner = page.locator("#demo-banner")
    expect(banner).to_be_visible()
    link = banner.get_by_role("link", name="Set a model server")
    expect(link).to_be_visible()
    assert banner.bounding_box()["height"] <= 40  # one line, not ~210 px of the thread
    # The text gives way, never the link: all of it inside the banner and the screen.
    assert link.evaluate("a => a.scrollWidth <= a.clientWidth + 1")
    edge = link.bounding_box()
    assert edge["x"] + edge["width"] <= min(
        banner.bounding_box()["x"] + banner.bounding_box()["width"], 390
    )
    banner.get_by_role("button", name="Dismiss the demo notice").click()
    expect(banner).to_be_hidden()
    page.reload()
    expect(page.get_by_role("heading", level=1)).to_have_text("New chat")
    page.wait_for_load_state("networkidle")
    expect(banner).to_be_hidden()  # the rest of this session


def test_the_task_filters_fold_on_a_phone_and_not_on_a_desktop(
    signed_in_phone, new_page, live_server_url
):
    from playwright.sync_api import expect

    Task.objects.create(title="Buy oat milk")
    page = signed_in_phone
    page.goto(f"{live_server_url}/tasks/")
    status = page.get_by_label("Show")
    expect(status).to_be_hidden()
    expect(page.locator("#task-list li")).to_be_in_viewport()  # the list on the first screen
    page.locator("#task-filters summary").click()
    expect(status).to_be_visible()
    status.select_option("all")
    page.get_by_role("button", name="Filter").click()
    expect(page).to_have_url(f"{live_server_url}/tasks/?status=all&project=&due=&q=")
    expect(page.locator("#task-filters summary")).to_contain_text("(in use)")
    assert page.evaluate(NO_SIDEWAYS)

    desktop = new_page()
    from tests.browser.conftest import log_in

    log_in(desktop, live_server_url)
    desktop.goto(f"{live_server_url}/tasks/")
    expect(desktop.get_by_label("Show")).to_be_visible()
    expect(desktop.locator("#task-filters summary")).to_be_hidden()


def test_settings_and_the_api_docs_fit_a_phone(signed_in_phone, live_server_url):
    from playwright.sync_api import expect

    page = signed_in_phone
    page.goto(f"{live_server_url}/settings/")
    zone = page.locator("select#time-zone")
    expect(zone).to_be_visible()
    card = page.locator("section#time_zone").bounding_box()
    box = zone.bounding_box()
    assert box["x"] + box["width"] <= card["x"] + card["width"] - 8  # inside the card's padding
    assert page.evaluate(NO_SIDEWAYS)

    page.goto(f"{live_server_url}/api/docs")
    first = page.locator(".opblock-summary").first
    expect(first).to_be_visible()
    assert first.bounding_box()["height"] < 80  # the path and its summary, not a tall box
    first.click()
    expect(page.get_by_role("button", name="Try it out").first).to_be_visible()
    # Nothing reaches past the screen's right edge (the page cannot just hide it).
    wide = page.evaluate(
        """[...document.querySelectorAll('#swagger-ui *')]
             .filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1)
             .filter((e) => !e.closest('pre, .highlight-code, .table-container, .model-box'))
             .map((e) => e.className).slice(0, 5)"""
    )
    assert wide == []
    assert page.evaluate(NO_SIDEWAYS)
    assert page.evaluate("document.querySelector('meta[name=viewport]') !== null")
    assert page.csp_violations == []


def test_the_header_keeps_one_row_with_a_long_model_name_and_a_count(
    signed_in_phone, live_server_url
):
    from playwright.sync_api import expect

    from talorys.notifications.models import Notification
    from talorys.owner.selectors import owner_settings_get

    row = owner_settings_get()
    row.model_base_url, row.model_name = "http://127.0.0.1:9/v1", "llama-3.1-70b-instruct-q4_K_M"
    row.save()
    for n in range(12):
        Notification.objects.create(title=f"Reminder {n}", body="")
    page = signed_in_phone
    page.goto(f"{live_server_url}/tasks/")
    expect(page.locator("#notif-count")).to_have_text("12")
    expect(page.locator("#model-badge")).to_have_text("llama-3.1-70b-instruct-q4_K_M")
    header = page.locator("header.top").bounding_box()
    assert header["height"] < 64, header  # one row
    tops = [
        page.locator(selector).bounding_box()
        for selector in (".brand", "#model-badge", "#notif-button", "#theme-toggle", "#menu-button")
    ]
    assert max(b["y"] for b in tops) - min(b["y"] for b in tops) < 20, tops
    assert max(b["x"] + b["width"] for b in tops) <= 390
    assert page.evaluate(NO_SIDEWAYS)
