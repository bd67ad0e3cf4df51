"""Notifications in a real browser (Debian's Chromium through Playwright) against live daphne:
live toasts and the unread badge, marking read, the service worker at /sw.js, a push message
shown by it, and turning Web Push on and off for the device.

Chromium subscribes to push through Google's push service, which a test cannot reach; the
subscribe test stands in for that service in the page (and only that), and the push test hands
the message to the worker through DevTools, as Chromium's push service would."""

from __future__ import annotations

import base64
import json
import os
import re
import uuid

import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from django.conf import settings as django_settings
from django.contrib.sessions.models import Session
from django.db import transaction

from talorys.notifications import push
from talorys.notifications import services as notification_services
from talorys.notifications import services as notify
from talorys.notifications.models import Notification, PushSubscription
from tests.browser.conftest import active_service_worker, in_a_thread
from tests.browser.socket_counter import COUNT_SOCKETS, sockets_made
from tests.conftest import OWNER_PASSWORD

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.browser]

TURN_ON = "Turn on notifications on this device"
TURN_OFF = "Turn off notifications on this device"
# The reconnect's first delays are at most 1 s, then 2 s (socket.js): a page that still
# retried would have opened a socket within this.
LONGER_THAN_TWO_RETRIES_MS = 4000


@pytest.fixture
def shared_channel_layer(settings, redis_url_for_tests) -> dict:
    """One Redis channel layer for this process and the live daphne, so that a notification
    sent here reaches the page, as one sent by a celery worker does in production."""
    layers = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            # Its own prefix: another test run on the same Redis cannot see these messages.
            # The read timeout outwaits the layer's 5 s blocking pop, as config/settings.py's
            # does (else an idle page's socket could close with 1011).
            "CONFIG": {
                "hosts": [
                    {
                        "address": redis_url_for_tests,
                        "socket_timeout": django_settings.REDIS_LAYER_READ_TIMEOUT,
                    }
                ],
                "prefix": f"test-{uuid.uuid4().hex}",
            },
        }
    }
    settings.CHANNEL_LAYERS = layers
    return layers


@pytest.fixture
def live_server_env(request) -> dict[str, str]:
    """Tests marked ``redis`` get a live daphne on the shared Redis channel layer."""
    if request.node.get_closest_marker("redis") is None:
        return {}
    layers = request.getfixturevalue("shared_channel_layer")
    return {
        "DJANGO_SETTINGS_MODULE": "tests.browser.redis_settings",
        "TALORYS_TEST_CHANNEL_LAYERS": json.dumps(layers),
    }


def log_in(page, url: str) -> None:
    from playwright.sync_api import expect

    page.goto(f"{url}/login/")
    page.get_by_label("Username").fill("owner")
    page.get_by_label("Password").fill(OWNER_PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page).to_have_url(f"{url}/")
    # The socket is open (and joined to the owner's group; in embedded mode the watcher runs)
    # before anything is sent to it, and the page has had its first look: what exists by then is
    # not news, what comes after is. Made before that look, a notification would not show.
    expect(page.locator("#notifications[data-live][data-caught-up]")).to_be_attached()


def send_and_roll_back() -> None:
    with transaction.atomic():
        notify.notification_send(title="Never shown", body="rolled back")
        transaction.set_rollback(True)


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


@pytest.mark.redis
def test_a_new_notification_shows_as_a_toast_and_bumps_the_badge(page, live_server_url):
    from playwright.sync_api import expect

    notification_services.notification_create(title="Earlier", body="")
    log_in(page, live_server_url)
    badge = page.locator("#notif-count")
    expect(badge).to_have_text("1")

    in_a_thread(send_and_roll_back)
    in_a_thread(
        notify.notification_send,
        title='Call Sam <img src=x onerror="document.title=1">',
        body="About Friday\nbring the <b>notes</b>",
        kind=Notification.Kind.REMINDER,
    )

    toast = page.locator(".toast")
    expect(toast).to_have_count(1)
    expect(toast).to_contain_text('Call Sam <img src=x onerror="document.title=1">')
    expect(toast).to_contain_text("bring the <b>notes</b>")
    expect(badge).to_have_text("2")
    assert page.locator(".toast img, .toast b").count() == 0
    assert page.title() != "1"

    toast.get_by_role("button", name="Dismiss").click()
    expect(toast).to_have_count(0)
    assert page.csp_violations == []


@pytest.mark.redis
def test_after_a_password_change_on_this_page_the_socket_reconnects_with_the_new_cookie(
    page, live_server_url
):
    """The change re-signs this session under a new key; the socket opened with the old key is
    closed at its next delivery (4401), and the page, still logged in, opens a new one."""
    from playwright.sync_api import expect

    log_in(page, live_server_url)
    # A request still in flight with the old cookie would be answered by deleting the cookie.
    page.wait_for_load_state("networkidle")
    page.evaluate(
        """async ([current, fresh]) => (await import("/static/talorys/common.js")).api(
            "/api/auth/password",
            {method: "POST", body: {current_password: current, new_password: fresh}})""",
        [OWNER_PASSWORD, "a much longer new passphrase"],
    )

    in_a_thread(notify.notification_send, title="Just after the change", body="")
    expect(page.locator("#notifications:not([data-live])")).to_be_attached()
    expect(page.locator("#notifications[data-live]")).to_be_attached()
    in_a_thread(notify.notification_send, title="Live again", body="")

    # Both, well before the 30 s poll: the first when the new socket catches up, the second live.
    toasts = page.locator(".toast")
    expect(toasts.filter(has_text="Just after the change")).to_have_count(1)
    expect(toasts.filter(has_text="Live again")).to_have_count(1)


@pytest.mark.redis
def test_after_the_session_ends_the_notifications_socket_stops_and_the_page_says_so(
    page, live_server_url
):
    """A delivery to a socket whose session is gone closes it (4401): the page, logged out, does
    not open another and offers to log in again (static/talorys/js/socket.js)."""
    from playwright.sync_api import expect

    page.add_init_script(COUNT_SOCKETS)
    log_in(page, live_server_url)
    assert sockets_made(page, "/ws/notifications/") == 1

    Session.objects.all().delete()  # logged out elsewhere
    in_a_thread(notify.notification_send, title="After the logout", body="")

    expect(page.locator("#notifications:not([data-live])")).to_be_attached()
    expect(page.locator("#session-ended")).to_contain_text("Your session has ended.")
    page.wait_for_timeout(LONGER_THAN_TWO_RETRIES_MS)
    assert sockets_made(page, "/ws/notifications/") == 1
    expect(page.locator(".toast")).to_have_count(0)  # not shown to a logged-out page


def test_without_a_shared_channel_layer_a_poll_still_shows_each_new_notification_once(
    page, live_server_url
):
    """The embedded install: a worker's notification cannot reach daphne's in-memory channel
    layer, so the page's poll finds it (shortened here from 30 s)."""
    from playwright.sync_api import expect

    page.add_init_script("window.TALORYS_POLL_MS = 300")
    notification_services.notification_create(title="Before the page", body="")
    log_in(page, live_server_url)
    page.wait_for_timeout(700)  # a few polls: what existed before is not news
    expect(page.locator(".toast")).to_have_count(0)

    notification_services.notification_create(title="Stretch", body="From the worker")

    toast = page.locator(".toast")
    expect(toast).to_have_count(1)
    expect(toast).to_contain_text("Stretch")
    expect(page.locator("#notif-count")).to_have_text("2")
    page.wait_for_timeout(700)
    expect(toast).to_have_count(1)  # shown once, not at every poll


def test_without_a_shared_channel_layer_the_server_watcher_pushes_a_workers_notification(
    page, live_server_url
):
    """The embedded install, with the page's poll out of the way: daphne's own watcher finds
    the notification another process made and pushes it over the socket, once."""
    from playwright.sync_api import expect

    page.add_init_script("window.TALORYS_POLL_MS = 3600000")
    log_in(page, live_server_url)
    notification_services.notification_create(title="Stretch", body="From the worker")

    toast = page.locator(".toast")
    expect(toast).to_have_count(1)
    expect(toast).to_contain_text("Stretch")
    expect(page.locator("#notif-count")).to_have_text("1")
    page.wait_for_timeout(2500)  # the watcher looked again: still once
    expect(toast).to_have_count(1)


def test_the_list_shows_the_latest_and_marks_one_read(page, live_server_url):
    from playwright.sync_api import expect

    first = notification_services.notification_create(
        title="Water the plants", body="The ferns first"
    )
    notification_services.notification_create(title="Pay rent", body="")
    log_in(page, live_server_url)
    badge = page.locator("#notif-count")
    expect(badge).to_have_text("2")

    page.get_by_role("button", name="Notifications").click()
    items = page.locator("#notif-list li")
    expect(items).to_have_count(2)
    expect(items.first).to_contain_text("Pay rent")  # newest first
    plants = items.filter(has_text="Water the plants")
    expect(plants).to_contain_text("The ferns first")
    plants.get_by_role("button", name="Mark read").click()

    expect(badge).to_have_text("1")
    expect(plants.get_by_role("button", name="Mark read")).to_have_count(0)
    first.refresh_from_db()
    assert first.read_at is not None
    assert Notification.objects.filter(read_at__isnull=True).get().title == "Pay rent"

    page.keyboard.press("Escape")
    expect(page.locator("#notif-panel")).to_be_hidden()
    assert page.csp_violations == []


def test_the_service_worker_registers_at_the_root_scope(page, live_server_url):
    from playwright.sync_api import expect

    worker = httpx.get(f"{live_server_url}/sw.js")  # anonymous: the browser fetches it so
    assert worker.status_code == 200
    assert worker.headers["content-type"].startswith("application/javascript")
    assert worker.headers["service-worker-allowed"] == "/"
    assert 'addEventListener("push"' in worker.text

    page.goto(f"{live_server_url}/login/")
    assert page.locator("#notifications").count() == 0  # nothing of it before logging in
    log_in(page, live_server_url)
    registration = page.evaluate(
        """async () => {
            const registration = await navigator.serviceWorker.ready;
            return {scope: registration.scope, script: registration.active.scriptURL};
        }"""
    )
    assert registration == {"scope": f"{live_server_url}/", "script": f"{live_server_url}/sw.js"}

    page.get_by_role("button", name="Notifications").click()
    expect(page.get_by_role("button", name=TURN_ON)).to_be_visible()
    assert page.csp_violations == []


def test_a_push_message_is_shown_by_the_service_worker(page, live_server_url):
    cdp, registration, _ = active_service_worker(page, live_server_url, log_in)

    notification = notification_services.notification_create(
        title="Call Sam",
        body="About Friday",
        kind=Notification.Kind.REMINDER,
        source="conversation:7",
    )
    shown: list[dict] = []
    for _ in range(3):  # DevTools' delivery is best effort, like a push service's
        # Exactly what talorys/notifications/push.py encrypts and sends to the browser's push service.
        cdp.send(
            "ServiceWorker.deliverPushMessage",
            {
                "origin": live_server_url,
                "registrationId": registration,
                "data": push._payload(notification),
            },
        )
        shown = page.evaluate(
            """async () => {
                const registration = await navigator.serviceWorker.ready;
                for (let i = 0; i < 30; i++) {
                    const shown = await registration.getNotifications();
                    if (shown.length) {
                        return shown.map((n) => ({title: n.title, body: n.body, url: n.data.url}));
                    }
                    await new Promise((resolve) => setTimeout(resolve, 100));
                }
                return [];
            }"""
        )
        if shown:
            break
    # The worker keeps where a click goes: the conversation the notification is about.
    assert shown == [{"title": "Call Sam", "body": "About Friday", "url": "/c/7/"}]


# Chromium's PushManager talks to Google's push service, out of reach here. This stands in for
# it (and only it): subscribe() records the options and returns a subscription to a local URL.
FAKE_PUSH_SERVICE = """
(() => {
  const endpoint = "https://push.example.com/push/this-device";
  const subscription = (key) => ({
    endpoint,
    options: {userVisibleOnly: true, applicationServerKey: new Uint8Array(key).buffer},
    toJSON: () => ({endpoint, expirationTime: null, keys: KEYS}),
    unsubscribe: async () => { localStorage.removeItem("fake-push"); return true; },
  });
  window.subscribeCalls = [];
  PushManager.prototype.subscribe = async function (options) {
    const key = Array.from(new Uint8Array(options.applicationServerKey));
    window.subscribeCalls.push({userVisibleOnly: options.userVisibleOnly, key});
    localStorage.setItem("fake-push", JSON.stringify(key));
    return subscription(key);
  };
  PushManager.prototype.getSubscription = async function () {
    const key = localStorage.getItem("fake-push");
    return key ? subscription(JSON.parse(key)) : null;
  };
})();
"""


def test_the_owner_turns_web_push_on_and_off_for_this_device(page, live_server_url, settings):
    from playwright.sync_api import expect

    # The fake push service's name is allowed by name, so registering it asks no DNS server:
    # the check resolves other names, and a slow resolver once held the subscribe past the
    # wait on a busy machine (the address checks: tests/notifications/test_push_endpoints.py).
    settings.TALORYS_PUSH_ALLOWED_HOSTS = ["push.example.com"]

    public = ec.generate_private_key(ec.SECP256R1()).public_key()
    keys = {
        "p256dh": b64url(public.public_bytes(Encoding.X962, PublicFormat.UncompressedPoint)),
        "auth": b64url(os.urandom(16)),
    }
    page.context.add_init_script(FAKE_PUSH_SERVICE.replace("KEYS", json.dumps(keys)))
    page.context.grant_permissions(["notifications"], origin=live_server_url)
    log_in(page, live_server_url)
    page.get_by_role("button", name="Notifications").click()

    page.get_by_role("button", name=TURN_ON).click()
    expect(page.get_by_role("button", name=TURN_OFF)).to_be_visible()
    expect(page.locator("#push-status")).to_have_text("This device will show notifications.")
    saved = PushSubscription.objects.get()
    assert (saved.endpoint, saved.p256dh, saved.auth, saved.active) == (
        "https://push.example.com/push/this-device",
        keys["p256dh"],
        keys["auth"],
        True,
    )
    assert "Chrome" in saved.user_agent
    (call,) = page.evaluate("window.subscribeCalls")
    assert call["userVisibleOnly"] is True
    # The server's VAPID key, decoded from base64url to the bytes the browser needs.
    assert b64url(bytes(call["key"])) == page.evaluate(
        "fetch('/api/push/key').then((r) => r.json()).then((key) => key.public_key)"
    )

    page.reload()  # the state survives a reload: the page asks the browser and the server
    page.get_by_role("button", name="Notifications").click()
    turn_off = page.get_by_role("button", name=TURN_OFF)
    expect(turn_off).to_be_visible()
    turn_off.click()
    expect(page.get_by_role("button", name=TURN_ON)).to_be_visible()
    assert not PushSubscription.objects.exists()
    assert page.csp_violations == []


def test_a_blocked_permission_subscribes_nothing(page, live_server_url):
    from playwright.sync_api import expect

    log_in(page, live_server_url)
    page.get_by_role("button", name="Notifications").click()
    # A headless browser that was granted nothing answers the permission prompt with "denied".
    page.get_by_role("button", name=TURN_ON).click()
    expect(page.locator("#push-status")).to_have_text(re.compile("blocked"))
    expect(page.get_by_role("button", name=TURN_ON)).to_be_visible()
    assert not PushSubscription.objects.exists()


# Each element in the header whose own text says "notifications", as the eye sees it: shown,
# and wider than the 1 px box a label kept for screen readers only is clipped to.
SEEN_SAYING_NOTIFICATIONS = """() => [...document.querySelectorAll("header.top *")].filter((el) => {
  const own = [...el.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE).map((n) => n.data);
  if (!/notifications/i.test(own.join(""))) return false;
  const box = el.getBoundingClientRect();
  return el.checkVisibility() && box.width > 1 && box.height > 1;
}).map((el) => el.textContent.trim())"""


def test_the_desktop_header_says_notifications_once(signed_in):
    """The bell's own words are for screen readers (its label is visually hidden): the header
    shows the word once, as the link to the Notifications page."""
    from playwright.sync_api import expect

    page = signed_in
    bell = page.locator("#notif-button")
    expect(bell).to_have_accessible_name(re.compile("Latest notifications"))
    expect(bell).to_be_visible()
    assert page.evaluate(SEEN_SAYING_NOTIFICATIONS) == ["Notifications"]


def test_a_notification_recorded_as_seen_is_never_toasted_nor_counted(page, live_server_url):
    """One the owner saw happen (notification_send's ``seen``: saved read, not broadcast) reaches
    a page only through the poll, with the others: it is listed, never toasted or counted."""
    from playwright.sync_api import expect

    page.add_init_script("window.TALORYS_POLL_MS = 300")
    log_in(page, live_server_url)

    in_a_thread(notify.notification_send, title="Waiting for your approval: Delete", seen=True)
    notification_services.notification_create(title="Stretch", body="From the worker")

    toast = page.locator(".toast")
    expect(toast).to_have_count(1)  # the poll that found "Stretch" found the seen one too
    expect(toast).to_contain_text("Stretch")
    expect(page.locator("#notif-count")).to_have_text("1")
    page.locator("#notif-button").click()
    expect(page.locator("#notif-list li")).to_have_count(2)
    expect(page.locator("#notif-list li.read")).to_contain_text("Waiting for your approval")
