"""Notification channels through Apprise to real local receivers (a JSON webhook and an
ntfy-compatible server on 127.0.0.1): a reminder arrives once per channel, quiet hours hold it,
a failing channel is retried then reported while the other still delivers, and a channel gets
only the kinds it asked for. Nothing here sends to any host but 127.0.0.1."""

from __future__ import annotations

import datetime as dt

import pytest

from automations import tasks
from automations.services.crud import automation_create
from talorys.notifications import outbox
from talorys.notifications import services as notify
from talorys.notifications import tasks as core_tasks
from talorys.notifications.channel_send import channel_delivery_send
from talorys.notifications.channels import channel_create
from talorys.notifications.models import ChannelDelivery, Notification
from talorys.owner.services.settings import owner_settings_update
from tests.automations.conftest import in_threads

UTC = dt.UTC
NOW = dt.datetime(2026, 1, 15, 21, 30, tzinfo=UTC)  # 22:30 in Paris


@pytest.fixture
def run(django_capture_on_commit_callbacks, eager):
    """Run ``fn`` and, on its commit, the tasks it enqueued (inline, as a worker would)."""

    def run_committed(fn, *args, **kwargs):
        with django_capture_on_commit_callbacks(execute=True):
            return fn(*args, **kwargs)

    return run_committed


@pytest.fixture
def two_channels(db, webhook, ntfy):
    return (
        channel_create(name="Webhook", url=f"json://127.0.0.1:{webhook.port}/hook"),
        channel_create(name="Phone", url=f"ntfy://127.0.0.1:{ntfy.port}/talorys"),
    )


def a_reminder_fires(clock, run) -> Notification:
    """A one-off reminder, due a minute from now, fired by the dispatcher."""
    automation = automation_create(
        name="Call Sam",
        kind="reminder",
        message="About Friday",
        schedule={"type": "once", "at": (NOW + dt.timedelta(minutes=1)).isoformat()},
    )
    clock.move_to(NOW + dt.timedelta(minutes=1, seconds=1))
    assert len(run(tasks.dispatch_and_enqueue)) == 1
    return Notification.objects.get(source=f"automation:{automation.pk}")


def test_a_reminder_arrives_once_on_each_channel(clock, run, two_channels, webhook, ntfy):
    a_reminder_fires(clock, run)
    ((hook,), (topic,)) = webhook.received, ntfy.received
    assert (hook["title"], hook["message"], hook["type"]) == ("Call Sam", "About Friday", "info")
    assert (topic["topic"], topic["title"], topic["message"]) == (
        "talorys",
        "Call Sam",
        "About Friday",
    )
    assert set(ChannelDelivery.objects.values_list("status", "attempts")) == {("sent", 1)}
    # Whatever tries again (the flush, a duplicated task) finds nothing to send.
    clock.shift(dt.timedelta(hours=1))
    assert run(core_tasks.flush_channel_deliveries) == 0
    for delivery in ChannelDelivery.objects.all():
        assert channel_delivery_send(delivery_id=delivery.pk) is None
    assert (len(webhook.received), len(ntfy.received)) == (1, 1)


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_one_receipt_is_sent_once_however_many_workers_race_for_it(needs_postgres, webhook):
    channel = channel_create(name="Webhook", url=f"json://127.0.0.1:{webhook.port}/hook")
    notification = notify.notification_create(title="Once", kind="reminder")
    delivery = ChannelDelivery.objects.create(
        notification=notification, channel=channel, not_before=NOW
    )
    results = in_threads(*[lambda: channel_delivery_send(delivery_id=delivery.pk)] * 4)
    assert sorted(results, key=str) == [None, None, None, "sent"]
    assert len(webhook.received) == 1


def test_quiet_hours_hold_channel_messages_until_they_end(
    clock, run, two_channels, webhook, ntfy, owner_zone, api
):
    owner_zone("Europe/Paris")
    owner_settings_update(quiet_hours_start="22:00", quiet_hours_end="07:00")
    notification = a_reminder_fires(clock, run)
    # The notification is there at once; only what goes out waits.
    assert api.get("/api/notifications").json()["items"][0]["id"] == notification.pk
    assert webhook.received == [] and ntfy.received == []
    assert set(ChannelDelivery.objects.values_list("status", "not_before")) == {
        ("held", dt.datetime(2026, 1, 16, 6, 0, tzinfo=UTC))  # 07:00 in Paris
    }
    clock.move_to(dt.datetime(2026, 1, 16, 5, 59, tzinfo=UTC))
    assert run(core_tasks.flush_channel_deliveries) == 0
    clock.move_to(dt.datetime(2026, 1, 16, 6, 0, 30, tzinfo=UTC))
    assert run(core_tasks.flush_channel_deliveries) == 2
    assert webhook.messages() == ntfy.messages() == ["About Friday"]
    assert run(core_tasks.flush_channel_deliveries) == 0


def test_a_failing_channel_is_retried_then_reported_while_the_other_delivers(
    clock, run, two_channels, webhook, ntfy, api
):
    webhook.answers = [503] * outbox.MAX_ATTEMPTS
    notification = a_reminder_fires(clock, run)
    assert ntfy.messages() == ["About Friday"]  # not held up by the other
    failing = ChannelDelivery.objects.get(channel__name="Webhook")
    assert (failing.status, failing.attempts) == ("pending", 1)
    assert "503" in failing.error
    for attempt in range(2, outbox.MAX_ATTEMPTS + 1):
        clock.move_to(failing.not_before + outbox.PENDING_GRACE)
        assert run(core_tasks.flush_channel_deliveries) == 1
        failing.refresh_from_db()
        assert failing.attempts == attempt
        if attempt < outbox.MAX_ATTEMPTS:  # backoff: each wait twice the one before
            assert failing.not_before - clock_now() == outbox.RETRY_BASE * 2 ** (attempt - 1)
    assert failing.status == "failed"
    assert len(webhook.received) == outbox.MAX_ATTEMPTS and len(ntfy.received) == 1
    # The owner sees it: on the notification, and on the channel's row.
    (listed,) = api.get("/api/notifications").json()["items"]
    assert listed["id"] == notification.pk
    by_channel = {row["channel"]: row for row in listed["channels"]}
    assert by_channel["Phone"]["status"] == "sent"
    assert by_channel["Webhook"]["status"] == "failed" and "503" in by_channel["Webhook"]["error"]
    rows = {row["name"]: row for row in api.get("/api/channels").json()["items"]}
    assert "503" in rows["Webhook"]["last_error"] and rows["Webhook"]["last_failure_at"]
    assert rows["Phone"]["last_error"] == "" and rows["Phone"]["last_success_at"]
    page = api.get("/notifications/").content.decode()
    assert "Not delivered to Webhook" in page and "503" in page


def clock_now() -> dt.datetime:
    return dt.datetime.now(UTC)


def test_a_dead_channel_blocks_neither_the_others_nor_the_notification(clock, run, webhook, db):
    channel_create(name="Gone", url="json://127.0.0.1:9/hook")  # nothing listens on port 9
    channel_create(name="Webhook", url=f"json://127.0.0.1:{webhook.port}/hook")
    notification = a_reminder_fires(clock, run)
    assert webhook.messages() == ["About Friday"]
    dead = ChannelDelivery.objects.get(channel__name="Gone")
    assert dead.status == "pending" and dead.error  # to be tried again
    assert Notification.objects.filter(pk=notification.pk).exists()


def test_a_channel_gets_only_the_kinds_it_asked_for(clock, run, webhook, ntfy, db):
    channel_create(
        name="Approvals only", url=f"json://127.0.0.1:{webhook.port}/h", kinds=["approval"]
    )
    channel_create(name="Off", url=f"ntfy://127.0.0.1:{ntfy.port}/t", enabled=False)
    a_reminder_fires(clock, run)
    run(notify.notification_send, title="Delete 'Old plan'?", kind="approval", source="approval:7")
    assert webhook.messages() == ["Open in Talorys: http://127.0.0.1:8000/approvals/#approval-7"]
    assert ntfy.received == []
    assert ChannelDelivery.objects.count() == 1


def test_an_approval_goes_out_as_a_link_to_the_page_never_as_a_way_to_decide(
    clock, run, webhook, settings, db
):
    settings.TALORYS_PUBLIC_URL = "https://talorys.example.org"
    channel_create(name="Webhook", url=f"json://127.0.0.1:{webhook.port}/hook")
    run(
        notify.notification_send,
        title="Delete task 'Old plan'?",
        body="Waiting for your approval.",
        kind="approval",
        source="approval:12",
    )
    (message,) = webhook.received
    assert message["type"] == "warning"
    assert message["message"] == (
        "Waiting for your approval.\n\n"
        "Open in Talorys: https://talorys.example.org/approvals/#approval-12"
    )
    assert set(message) == {"version", "title", "message", "attachments", "type"}
