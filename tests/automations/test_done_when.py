"""A reminder end to end, through a whole chat turn: "Remind me to call Sam in 2 minutes" creates
an automation that fires once, leaves a receipt and a notification, and pushes to a subscribed
browser (the local push service in conftest.py).

The clock is moved forward and the beat and worker tasks are called as a worker calls them, with
celery eager; tests/automations/test_end_to_end.py runs the real worker and beat processes.
"""

from __future__ import annotations

import datetime as dt
import json

import pytest

from automations import tasks
from automations.models import Automation, AutomationRun
from talorys.notifications.models import Notification, PushDelivery
from tests.agent.fake_openai import text, tool_calls
from tests.agent.test_runner import TURN_DATABASE, reply_of, streamed_text, turn, use_fake

pytestmark = TURN_DATABASE  # a turn's trips see committed rows only

UTC = dt.UTC
NOW = dt.datetime(2026, 1, 15, 13, 30, 20, tzinfo=UTC)  # Thursday 14:30:20 in Paris
SLOT = dt.datetime(2026, 1, 15, 13, 32, tzinfo=UTC)  # 14:32 in Paris
LOCAL_TIME = "Thursday 15 January 2026, 14:30 (Europe/Paris, UTC+01:00)"


@pytest.fixture
def subscribed(api, owner_zone, push_service, browser):
    """An owner in Paris whose browser subscribed to pushes."""
    owner_zone("Europe/Paris")
    response = api.post("/api/push/subscriptions", browser.subscription(push_service.endpoint()))
    assert response.status_code == 201, response.content


@pytest.fixture
def beat(django_capture_on_commit_callbacks, eager):
    """One beat tick at ``when``: the dispatcher task, then (on its commit, as a worker would)
    the run tasks it enqueued and the push deliveries they made. Returns how many it claimed."""

    def tick(clock, when: dt.datetime) -> int:
        clock.move_to(when)
        with django_capture_on_commit_callbacks(execute=True):
            return tasks.dispatch_due()

    return tick


def assert_it_fires_once(clock, beat, push_service, browser) -> None:
    automation = Automation.objects.get()
    assert (automation.name, automation.kind, automation.origin) == ("Call Sam", "reminder", "chat")
    assert automation.schedule == {"type": "once", "at": "2026-01-15T14:32:00+01:00"}
    assert (automation.enabled, automation.next_run_at) == (True, SLOT)

    assert beat(clock, SLOT - dt.timedelta(seconds=30)) == 0  # not yet
    assert not Notification.objects.exists() and push_service.requests == []

    assert beat(clock, SLOT + dt.timedelta(seconds=2)) == 1

    (run,) = AutomationRun.objects.all()
    assert (run.automation_id, run.slot, run.status) == (automation.pk, SLOT, "ok")
    assert run.result == "Reminded: Call Sam"
    (notification,) = Notification.objects.all()
    assert (notification.title, notification.kind) == ("Call Sam", "reminder")
    assert notification.source == f"automation:{automation.pk}"
    assert run.notification == notification
    (request,) = push_service.requests
    assert request.path == "/push/browser-1"
    pushed = browser.decrypt(request.body)
    assert (pushed["id"], pushed["title"]) == (notification.pk, "Call Sam")
    assert PushDelivery.objects.get().status == "sent"
    automation.refresh_from_db()
    assert (automation.enabled, automation.next_run_at) == (False, None)
    assert (automation.run_count, automation.last_status) == (1, "ok")

    # Later ticks (the next minute, an hour, a day) find nothing due: it fired once.
    for later in (dt.timedelta(minutes=1), dt.timedelta(hours=1), dt.timedelta(days=1)):
        assert beat(clock, SLOT + later) == 0
    assert AutomationRun.objects.count() == 1
    assert Notification.objects.count() == 1
    assert len(push_service.requests) == 1


def test_the_demo_reminds_me_to_call_sam_in_two_minutes(
    clock, subscribed, beat, push_service, browser
):
    result = turn(text="Remind me to call Sam in 2 minutes")

    assert streamed_text(result) == "I'll remind you to call Sam at 14:32."
    reply = reply_of(result)
    assert reply.status == "complete"
    assert [(a["tool"], a["status"]) for a in reply.tool_activity] == [("create_automation", "ok")]
    assert_it_fires_once(clock, beat, push_service, browser)


def test_a_model_reminds_me_to_call_sam_in_two_minutes(
    clock, subscribed, beat, push_service, browser, fake_openai
):
    use_fake(fake_openai)
    arguments = {
        "name": "Call Sam",
        "kind": "reminder",
        "schedule": {"type": "once", "at": "2026-01-15T14:32:00+01:00"},
    }
    fake_openai.script(
        tool_calls(("create_automation", json.dumps(arguments))),
        text("I'll remind you ", "to call Sam at 14:32."),
    )

    result = turn(text="Remind me to call Sam in 2 minutes")

    # The model was told the owner's local time and offered the tool it called.
    first = fake_openai.requests[0]
    assert f"The owner's local time: {LOCAL_TIME}." in first["messages"][0]["content"]
    assert "create_automation" in [spec["function"]["name"] for spec in first["tools"]]
    assert streamed_text(result) == "I'll remind you to call Sam at 14:32."
    assert [(a["tool"], a["status"]) for a in reply_of(result).tool_activity] == [
        ("create_automation", "ok")
    ]
    assert_it_fires_once(clock, beat, push_service, browser)
