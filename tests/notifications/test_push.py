"""Web Push to a subscribed browser, through a real local push service: encrypted payload,
VAPID, quiet hours, retries and a subscription the browser dropped."""

from __future__ import annotations

import base64
import datetime as dt
import json

import pytest
from django.conf import settings
from py_vapid import Vapid

from talorys.notifications import outbox, push
from talorys.notifications import services as notification_services
from talorys.notifications import services as notify
from talorys.notifications import tasks as core_tasks
from talorys.notifications.models import PushDelivery, PushSubscription
from talorys.owner.services.settings import owner_settings_update

UTC = dt.UTC
NOW = dt.datetime(2026, 1, 15, 21, 30, tzinfo=UTC)  # 22:30 in Paris


@pytest.fixture
def subscribed(api, push_service, browser):
    response = api.post("/api/push/subscriptions", browser.subscription(push_service.endpoint()))
    assert response.status_code == 201, response.content
    return response.json()


@pytest.fixture
def send(django_capture_on_commit_callbacks, eager):
    """notification_send as an automation does it, with its on-commit pushes run inline."""

    def send_notification(title: str = "Call Sam", body: str = "About Friday"):
        with django_capture_on_commit_callbacks(execute=True):
            return notify.notification_send(
                title=title, body=body, kind="reminder", source="automation:1"
            )

    return send_notification


def test_the_public_key_is_the_servers_vapid_key(api):
    key = api.get("/api/push/key").json()["public_key"]
    assert key == push.vapid_public_key()
    assert push.vapid_key_path().read_bytes().startswith(b"-----BEGIN")
    assert push.vapid_key_path().stat().st_mode & 0o777 == 0o600


def test_a_notification_is_pushed_encrypted_and_signed(
    clock, subscribed, send, push_service, browser
):
    notification = send()
    (request,) = push_service.requests
    assert request.path == "/push/browser-1"
    assert request.headers["content-encoding"] == "aes128gcm"
    assert int(request.headers["ttl"]) > 0
    assert browser.decrypt(request.body) == {
        "id": notification.pk,
        "title": "Call Sam",
        "body": "About Friday",
        "kind": "reminder",
        "url": "/notifications/",
    }
    # Signed with our VAPID key, for this push service.
    scheme, _, params = request.headers["authorization"].partition(" ")
    fields = dict(part.split("=", 1) for part in params.split(","))
    assert scheme == "vapid" and fields["k"] == push.vapid_public_key()
    assert Vapid.verify(request.headers["authorization"])
    token = fields["t"].split(".")[1]
    claims = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    assert claims["aud"] == push_service.endpoint().rsplit("/push/", 1)[0]
    assert claims["sub"] == settings.TALORYS_VAPID_SUBJECT
    delivery = PushDelivery.objects.get()
    assert (delivery.status, delivery.status_code, delivery.attempts) == ("sent", 201, 1)


@pytest.mark.parametrize(
    ("source", "opens"),
    [
        ("conversation:12", "/c/12/"),  # "Your reply is ready" (agent/live/ready.py)
        ("automation:1", "/notifications/"),
        ("approval:7", "/approvals/#approval-7"),  # its card, not just the list
        ("approval:7#x", "/notifications/"),
        ("conversation:", "/notifications/"),
        ("conversation:12/../admin", "/notifications/"),
        ("", "/notifications/"),
    ],
)
def test_a_push_opens_the_conversation_it_is_about_else_the_notifications(
    clock,
    subscribed,
    push_service,
    browser,
    django_capture_on_commit_callbacks,
    eager,
    source,
    opens,
):
    with django_capture_on_commit_callbacks(execute=True):
        notify.notification_send(title="Your reply is ready: Plan", source=source)
    (request,) = push_service.requests
    assert browser.decrypt(request.body)["url"] == opens


def test_quiet_hours_hold_pushes_not_notifications_until_they_end(
    clock, api, subscribed, send, push_service, owner_zone, browser
):
    owner_zone("Europe/Paris")
    owner_settings_update(quiet_hours_start="22:00", quiet_hours_end="07:00")
    notification = send()
    # The owner's notification list has it at once; only the push waits.
    assert api.get("/api/notifications").json()["items"][0]["id"] == notification.pk
    assert push_service.requests == []
    delivery = PushDelivery.objects.get()
    assert delivery.status == "held"
    assert delivery.not_before == dt.datetime(2026, 1, 16, 6, 0, tzinfo=UTC)  # 07:00 Paris

    clock.move_to(dt.datetime(2026, 1, 16, 5, 59, tzinfo=UTC))
    assert core_tasks.flush_push_deliveries() == 0
    assert push_service.requests == []

    clock.move_to(dt.datetime(2026, 1, 16, 6, 0, 30, tzinfo=UTC))
    assert core_tasks.flush_push_deliveries() == 1
    (request,) = push_service.requests
    assert browser.decrypt(request.body)["title"] == "Call Sam"
    assert PushDelivery.objects.get().status == "sent"
    assert core_tasks.flush_push_deliveries() == 0  # sent once


def test_a_subscription_the_browser_dropped_is_deactivated(clock, subscribed, send, push_service):
    push_service.status = 410
    send()
    delivery = PushDelivery.objects.get()
    assert (delivery.status, delivery.status_code) == ("gone", 410)
    assert "410" in delivery.error
    subscription = PushSubscription.objects.get()
    assert not subscription.active and subscription.deactivated_at == NOW
    # No more pushes to it.
    send("Second")
    assert len(push_service.requests) == 1
    assert PushDelivery.objects.count() == 1


def test_a_failing_push_service_is_retried_then_recorded_as_failed(
    clock, subscribed, send, push_service
):
    push_service.status = 503
    send()
    delivery = PushDelivery.objects.get()
    assert (delivery.status, delivery.attempts, delivery.status_code) == ("pending", 1, 503)
    assert delivery.not_before == NOW + outbox.RETRY_BASE
    push_service.status = 201
    clock.shift(outbox.RETRY_BASE + outbox.PENDING_GRACE)
    assert core_tasks.flush_push_deliveries() == 1
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("sent", 2)

    push_service.status = 400  # not worth retrying
    send("Another")
    failed = PushDelivery.objects.exclude(pk=delivery.pk).get()
    assert (failed.status, failed.status_code) == ("failed", 400)


def test_an_unreachable_push_service_is_recorded(clock, api, browser, send, settings):
    settings.TALORYS_PUSH_ALLOWED_HOSTS = ["127.0.0.1:9"]  # allowed, and nothing listens there
    api.post("/api/push/subscriptions", browser.subscription("http://127.0.0.1:9/push/nobody"))
    send()
    delivery = PushDelivery.objects.get()
    assert delivery.status == "pending" and "could not reach the push service" in delivery.error


def test_a_delivery_is_sent_once_however_many_tasks_try(clock, subscribed, push_service):
    notification = notification_services.notification_create(title="Once")
    (delivery_id,) = push.push_deliveries_create(notifications=[notification])
    assert core_tasks.deliver_push(delivery_id) == "sent"
    assert core_tasks.deliver_push(delivery_id) is None
    assert len(push_service.requests) == 1


# --- the subscription API ----------------------------------------------------------------------


def test_subscribing_twice_refreshes_one_subscription_and_it_can_be_removed(
    api, browser, push_service
):
    first = api.post("/api/push/subscriptions", browser.subscription(push_service.endpoint()))
    again = api.post("/api/push/subscriptions", browser.subscription(push_service.endpoint()))
    assert first.status_code == again.status_code == 201
    assert first.json()["id"] == again.json()["id"]
    assert api.get("/api/push/subscriptions").json()["count"] == 1
    assert api.delete(f"/api/push/subscriptions/{first.json()['id']}").status_code == 204
    assert PushSubscription.objects.count() == 0
    missing = api.delete(f"/api/push/subscriptions/{first.json()['id']}")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "NOT_FOUND"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"endpoint": "http://push.example.com/x"}, "endpoint must be the https:// URL"),
        ({"endpoint": "ftp://127.0.0.1/x"}, "endpoint must be the https:// URL"),
        ({"keys": {"p256dh": "abc", "auth": "AAAAAAAAAAAAAAAAAAAAAA"}}, "keys.p256dh"),
        ({"keys": {"p256dh": None, "auth": "x"}}, "keys.p256dh"),
        ({"surprise": 1}, "surprise"),
    ],
)
def test_a_bad_subscription_is_refused_and_changes_nothing(api, browser, change, message):
    body = browser.subscription("https://push.example.com/send/abc") | change
    response = api.post("/api/push/subscriptions", body)
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "VALIDATION"
    assert message in response.json()["error"]["message"]
    assert PushSubscription.objects.count() == 0


def test_push_endpoints_need_the_owner(anon_api):
    assert anon_api.get("/api/push/key").status_code == 401
    assert anon_api.post("/api/push/subscriptions", {}).status_code in (401, 403)
