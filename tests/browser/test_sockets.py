"""The pages' WebSockets in a real browser against live daphne (static/talorys/js/socket.js): a
dropped socket comes back, and one closed because the session ended (4401) does not, and the
page says so, with a link to log in again."""

from __future__ import annotations

import pytest
from django.contrib.sessions.models import Session

from tests.browser.socket_counter import COUNT_SOCKETS, sockets_made
from tests.waiting import wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]

# The reconnect's first delays are at most 1 s, then 2 s (socket.js): a page that still
# retried would have opened a socket, twice, within this.
LONGER_THAN_TWO_RETRIES_MS = 4000


def test_after_the_session_ends_the_chat_socket_stops_reconnecting_and_says_so(signed_in):
    from playwright.sync_api import expect

    page = signed_in
    page.add_init_script(COUNT_SOCKETS)
    page.wait_for_load_state("networkidle")  # the first run's save of the zone is done
    page.reload()
    expect(page.get_by_role("button", name="Send")).to_be_enabled()  # the chat's socket is open
    assert sockets_made(page, "/ws/chat/") == 1

    # Logged out elsewhere: the session is gone from the server, the cookie stays in this page.
    Session.objects.all().delete()
    page.get_by_label("Message").fill("Add a task to water the plants")
    page.get_by_label("Message").press("Enter")

    # The server answers the frame with the reason and closes the socket with 4401.
    reply = page.locator(".msg.assistant").last
    expect(reply).to_contain_text("Your session has ended. Log in again.")
    page.wait_for_timeout(LONGER_THAN_TWO_RETRIES_MS)
    assert sockets_made(page, "/ws/chat/") == 1  # not one attempt after the close

    ended = page.locator("#session-ended")
    expect(ended).to_contain_text("Your session has ended.")
    expect(ended.get_by_role("link", name="Log in again")).to_have_attribute(
        "href", "/login/?next=%2F"
    )
    expect(page.locator("#status")).to_have_text("Your session has ended: log in again to go on.")
    expect(page.get_by_role("button", name="Send")).to_be_disabled()
    assert page.csp_violations == []

    ended.get_by_role("link", name="Log in again").click()
    expect(page.get_by_label("Username")).to_be_visible()


def test_a_dropped_chat_socket_comes_back_and_the_page_can_send_again(signed_in):
    from playwright.sync_api import expect

    page = signed_in
    attempts: list[object] = []

    def drop_the_first(socket) -> None:
        attempts.append(socket)
        socket.connect_to_server()
        if len(attempts) == 1:
            socket.close(code=1012, reason="Service restart")  # as a restarting server does

    page.route_web_socket("**/ws/chat/", drop_the_first)
    page.reload()
    # Playwright's sync API runs the route's handler only while the test is inside a call to it.
    wait_for(
        lambda: page.wait_for_timeout(50) or len(attempts) >= 2,
        "a second chat socket after the drop",
    )
    expect(page.get_by_role("button", name="Send")).to_be_enabled()
    expect(page.locator("#status")).to_have_text("")
    expect(page.locator("#session-ended")).to_have_count(0)

    page.get_by_label("Message").fill("what are my open tasks?")
    page.get_by_label("Message").press("Enter")
    expect(page.locator(".msg.assistant").last).to_have_attribute("data-status", "complete")
