"""The admin's Activity page (automations/admin.py): counts per day of turns, tool calls,
provider errors and automation runs, in the owner's time zone, in a fixed number of queries."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
import time_machine
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from agent.models import Conversation, Message, Origin
from automations.models import AutomationRun
from automations.services.crud import automation_create
from talorys.owner.services.settings import owner_settings_update

NOW = dt.datetime(2026, 6, 10, 14, 0, tzinfo=dt.UTC)  # 10:00 in New York
TODAY, YESTERDAY = dt.date(2026, 6, 10), dt.date(2026, 6, 9)
ACTIVITY = "/admin/activity/"


@pytest.fixture
def operator(db, django_user_model) -> Client:
    with time_machine.travel(NOW, tick=False):
        owner_settings_update(time_zone="America/New_York")
        user = django_user_model.objects.create_superuser(username="operator", password="x" * 12)
        client = Client()
        client.force_login(user)
        yield client


def reply(conversation: Conversation, at: dt.datetime, **fields: Any) -> Message:
    message = Message.objects.create(conversation=conversation, role="assistant", **fields)
    Message.objects.filter(pk=message.pk).update(created_at=at)
    return message


def calls(count: int) -> list[dict[str, Any]]:
    return [{"tool": "list_tasks", "args": {}, "status": "ok", "summary": "tasks: 0"}] * count


def run(automation: Any, slot: dt.datetime, status: str) -> None:
    finished = None if status == "running" else slot
    AutomationRun.objects.create(
        automation=automation, slot=slot, started_at=slot, status=status, finished_at=finished
    )


def add_activity(*, extra: int = 0) -> None:
    conversation = Conversation.objects.create(title="Day")
    today = NOW - dt.timedelta(hours=1)
    reply(conversation, today, status="complete", tool_activity=calls(3))
    reply(conversation, today, status="complete", tool_activity=calls(1))
    reply(conversation, today, status="error", error_code="PROVIDER_TIMEOUT")
    reply(conversation, today, status="error", error_code="INTERNAL")
    reply(conversation, today, status="cancelled")
    # Not turns: the owner's own message, and a reply that came in with an import.
    Message.objects.create(conversation=conversation, role="user", content="hi")
    reply(conversation, today, status="complete", origin=Origin.IMPORT, tool_activity=calls(5))
    # 22:00 the day before in New York, though already the 10th in UTC.
    reply(conversation, dt.datetime(2026, 6, 10, 2, 0, tzinfo=dt.UTC), tool_activity=calls(2))
    reply(conversation, NOW - dt.timedelta(days=20), status="error", error_code="PROVIDER_AUTH")
    for n in range(extra):
        reply(conversation, NOW - dt.timedelta(days=n % 14), tool_activity=calls(n % 3))

    automation = automation_create(
        name="Digest", kind="reminder", message="", schedule={"type": "daily", "time": "08:00"}
    )
    run(automation, today, "ok")
    run(automation, today - dt.timedelta(minutes=5), "ok")
    run(automation, today - dt.timedelta(minutes=10), "error")
    run(automation, dt.datetime(2026, 6, 10, 3, 0, tzinfo=dt.UTC), "skipped")  # the 9th there
    run(automation, NOW - dt.timedelta(days=30), "error")


def by_day(response: Any) -> dict[dt.date, dict[str, int]]:
    columns = response.context["columns"]
    return {
        row["day"]: dict(zip(columns, row["counts"], strict=True))
        for row in response.context["rows"]
    }


def test_the_activity_page_counts_each_day_in_the_owner_zone(operator):
    with time_machine.travel(NOW, tick=False):
        add_activity()
        response = operator.get(ACTIVITY)

    assert response.status_code == 200
    days = by_day(response)
    assert list(days) == [TODAY - dt.timedelta(days=n) for n in range(14)]
    assert days[TODAY] == {
        "Turns in progress": 0,
        "Turns complete": 2,
        "Turns cancelled": 1,
        "Turns failed": 2,
        "Tool calls": 4,
        "Provider errors": 1,
        "Runs in progress": 0,
        "Runs ok": 2,
        "Runs failed": 1,
        "Runs skipped": 0,
    }
    assert days[YESTERDAY]["Turns complete"] == 1
    assert days[YESTERDAY]["Tool calls"] == 2
    assert days[YESTERDAY]["Runs skipped"] == 1
    # Nothing from before the fourteen days: the old provider error and failed run.
    assert sum(day["Provider errors"] for day in days.values()) == 1
    assert sum(day["Runs failed"] for day in days.values()) == 1
    totals = dict(zip(response.context["columns"], response.context["totals"], strict=True))
    assert totals["Tool calls"] == 6
    assert b"America/New_York" in response.content


def test_the_activity_page_makes_the_same_queries_however_busy_the_days(operator):
    with time_machine.travel(NOW, tick=False):
        add_activity()
        operator.get(ACTIVITY)  # the first request of a session also saves it
        with CaptureQueriesContext(connection) as quiet:
            assert operator.get(ACTIVITY).status_code == 200
        add_activity(extra=60)
        with CaptureQueriesContext(connection) as busy:
            response = operator.get(ACTIVITY)

    assert len(busy) == len(quiet) <= 6
    assert sum(day["Turns complete"] for day in by_day(response).values()) == 2 * 3 + 60


def test_the_admin_index_links_to_the_activity_page(operator):
    with time_machine.travel(NOW, tick=False):
        index = operator.get(reverse("admin:index"))

    assert reverse("admin:activity") == ACTIVITY
    assert f'href="{ACTIVITY}"'.encode() in index.content
    assert b"Operations" in index.content


def test_the_activity_page_is_for_the_operator_only(db, django_user_model):
    assert Client().get(ACTIVITY).status_code == 302  # to the admin's login
    helper = django_user_model.objects.create_user(username="helper", is_staff=True)
    client = Client()
    client.force_login(helper)  # staff, but not the owner
    assert client.get(ACTIVITY).status_code == 302
