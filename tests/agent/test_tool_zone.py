"""A tool call reads the owner's time zone once, however many times it shows, and each call of a
turn reads it afresh: a zone the owner changes mid-turn shows in the next call."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agent.executor import ToolExecutor, ToolOutcome
from talorys.lib.tools import ToolContext
from talorys.owner.models import OwnerSettings
from talorys.owner.services.settings import owner_settings_update
from talorys.providers.base import ToolCall
from talorys.workspace import services

pytestmark = pytest.mark.django_db

DUE = dt.datetime(2026, 3, 5, 8, 0, tzinfo=dt.UTC)


def settings_reads(queries: CaptureQueriesContext) -> int:
    table = OwnerSettings._meta.db_table
    return sum(f'"{table}"' in query["sql"] for query in queries.captured_queries)


def call(executor: ToolExecutor, tool: str, **arguments: Any) -> ToolOutcome:
    outcome = executor.execute(ToolCall(id=tool, name=tool, arguments=arguments))
    assert outcome.ok, outcome.result
    return outcome


def test_a_list_of_twenty_tasks_reads_the_zone_once():
    owner_settings_update(time_zone="Europe/Paris")
    for i in range(20):
        services.task_create(title=f"Task {i}", due_at=DUE)
    executor = ToolExecutor(ctx=ToolContext(), max_tool_calls=5)

    with CaptureQueriesContext(connection) as queries:
        outcome = call(executor, "list_tasks")

    assert {task["due_at"] for task in outcome.result["tasks"]} == {"2026-03-05T09:00+01:00"}
    assert settings_reads(queries) == 1


def test_each_call_of_a_turn_reads_the_zone_as_it_is_then():
    owner_settings_update(time_zone="Europe/Paris")
    services.task_create(title="Book the ferry", due_at=DUE)
    executor = ToolExecutor(ctx=ToolContext(), max_tool_calls=5)

    before = call(executor, "list_tasks").result["tasks"][0]["due_at"]
    owner_settings_update(time_zone="America/New_York")
    after = call(executor, "search_tasks", query="ferry").result["tasks"][0]["due_at"]

    assert (before, after) == ("2026-03-05T09:00+01:00", "2026-03-05T03:00-05:00")
