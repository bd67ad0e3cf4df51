"""What the notify_owner tool may send (talorys/notifications/from_tools.py): a caller (one MCP
token, the chat, one automation) makes at most Notification.TOOL_PER_CALLER_DAY notifications in
24 hours, a channel receives at most Notification.TOOL_PER_CHANNEL_DAY of them, and the same
notification again while the first is unread and recent is not sent twice. The tool is called as
MCP and the chat call it, through the executor; the receipts are the channels' own rows."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
import time_machine
from django.utils import timezone

from agent.executor import ToolExecutor, ToolOutcome
from talorys.lib.tools import ToolContext
from talorys.notifications.channels import channel_create
from talorys.notifications.from_tools import notification_from_tool
from talorys.notifications.models import ChannelDelivery, Notification
from talorys.notifications.services import notification_mark_read
from talorys.providers.base import ToolCall
from tests.automations.conftest import in_threads

pytestmark = pytest.mark.django_db

PER_CALLER = Notification.TOOL_PER_CALLER_DAY
PER_CHANNEL = Notification.TOOL_PER_CHANNEL_DAY


def notify(source: str, title: str, body: str = "") -> ToolOutcome:
    """notify_owner as a caller calls it: MCP's write token ("mcp:<prefix>"), or the chat."""
    executor = ToolExecutor(ctx=ToolContext(mode="chat", source=source), max_tool_calls=3)
    call = ToolCall(id="call-1", name="notify_owner", arguments={"title": title, "body": body})
    return executor.execute(call)


def made(source: str, count: int, *, start: int = 0) -> None:
    """``count`` distinct notifications from ``source``, as the tool makes them."""
    for n in range(start, start + count):
        notification_from_tool(title=f"Build {n} failed", body="", kind="info", source=source)


@pytest.fixture
def phone(db) -> Any:
    # Never sent here: the receipts are made in the notification's transaction, the sends are
    # enqueued on its commit (which a test's transaction never reaches).
    return channel_create(name="Phone", url="json://127.0.0.1:9/hook")


def receipts(channel: Any) -> int:
    return ChannelDelivery.objects.filter(channel=channel).count()


def test_a_token_past_its_daily_cap_is_refused_and_nothing_more_is_sent(phone):
    made("mcp:tokena", PER_CALLER - 1)
    assert notify("mcp:tokena", "Last one").ok

    refused = notify("mcp:tokena", "One too many")

    assert not refused.ok
    error = refused.result["error"]
    assert error["code"] == "RATE_LIMITED"
    assert f"{PER_CALLER} notifications in 24 hours" in error["message"]
    assert "Nothing was sent" in error["message"]
    assert Notification.objects.filter(source="mcp:tokena").count() == PER_CALLER
    assert receipts(phone) == PER_CALLER
    # The cap is the token's: another token, and the chat, still reach the owner.
    assert notify("mcp:tokenb", "From another script").ok
    assert notify("chat", "From the chat").ok
    assert receipts(phone) == PER_CALLER + 2


def test_the_cap_is_over_24_hours(phone):
    start = timezone.now()
    with time_machine.travel(start, tick=False) as clock:
        made("mcp:tokena", PER_CALLER)
        assert not notify("mcp:tokena", "Too soon").ok
        clock.shift(dt.timedelta(hours=24, seconds=1))

        assert notify("mcp:tokena", "A new day").ok


def test_a_channel_past_its_daily_cap_gets_nothing_more_and_the_caller_is_told(phone):
    callers = [f"mcp:token{n}" for n in range(PER_CHANNEL // PER_CALLER + 1)]
    for index, source in enumerate(callers[:-1]):
        made(source, PER_CALLER, start=index * PER_CALLER)
    assert receipts(phone) == PER_CHANNEL
    later = channel_create(name="Desk", url="json://127.0.0.1:9/desk")

    outcome = notify(callers[-1], "Disk almost full")

    assert outcome.ok
    assert receipts(phone) == PER_CHANNEL  # nothing more for the full channel
    assert receipts(later) == 1  # the other channel still gets it
    assert outcome.result["not_sent_to"] == ["Phone"]
    assert f"{PER_CHANNEL} notifications from tools in 24 hours" in outcome.result["message"]
    # The owner still has it in Talorys.
    assert Notification.objects.filter(title="Disk almost full").count() == 1


def test_the_same_notification_again_is_not_sent_twice(phone):
    first = notify("mcp:tokena", "Backup failed", "Disk full")

    again = notify("mcp:tokena", "Backup failed", "Disk full")

    assert again.ok and again.result["repeated"] is True
    assert again.result["notification"]["id"] == first.result["notification"]["id"]
    assert Notification.objects.count() == 1 and receipts(phone) == 1
    # Different words are a new notification; so is the same once the owner read the first.
    assert notify("mcp:tokena", "Backup failed", "Disk still full").result["repeated"] is False
    notification_mark_read(notification_id=first.result["notification"]["id"])
    assert notify("mcp:tokena", "Backup failed", "Disk full").result["repeated"] is False
    assert receipts(phone) == 3


def test_the_same_notification_an_hour_later_is_sent_again(phone):
    with time_machine.travel(timezone.now(), tick=False) as clock:
        notify("mcp:tokena", "Still down")
        clock.shift(Notification.TOOL_REPEAT_WINDOW + dt.timedelta(seconds=1))

        assert notify("mcp:tokena", "Still down").result["repeated"] is False
    assert receipts(phone) == 2


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_racing_calls_never_pass_the_cap(needs_postgres, phone):
    made("mcp:tokena", PER_CALLER - 1)

    outcomes = in_threads(*[lambda n=n: notify("mcp:tokena", f"Race {n}") for n in range(4)])

    assert sum(outcome.ok for outcome in outcomes) == 1
    assert Notification.objects.filter(source="mcp:tokena").count() == PER_CALLER
    assert receipts(phone) == PER_CALLER
