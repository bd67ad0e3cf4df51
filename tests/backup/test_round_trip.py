"""Export, then import into an empty database: the same data comes back, except what the fences
change on purpose (paused automations, import-origin conversations and messages, no summaries,
no approvable actions, the provider settings of the installation)."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent.models import Conversation, Message
from automations.models import Automation
from backup.services import backup_import
from memory.models import Memory
from talorys.notifications.models import Notification
from talorys.workspace.models import Note, Project, Task
from tests.backup.helpers import clear, exported, seed

pytestmark = pytest.mark.django_db


def fenced(data: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """``data`` as an import into an empty database installs it."""
    data = json.loads(json.dumps(data))
    for row in data["automations"]:
        row.update(enabled=False, next_run_at=None, armed_time_zone="", origin="import")
    for row in data["conversations"]:
        row.update(summary="", summary_upto=None, origin="import")
    for row in data["messages"]:
        row["origin"] = "import"
        row["status"] = "cancelled" if row["status"] == "streaming" else row["status"]
        for item in row["tool_activity"]:
            item.pop("action_id", None)
    for row in data["pending_actions"]:
        row["status"] = "expired" if row["status"] == "pending" else row["status"]
    for row in data["settings"]:
        row.update(model_base_url="", model_name="", embeddings_base_url="", embeddings_model="")
    return data


def round_trip() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    before = exported()
    clear()
    report = backup_import(source=json.dumps(before).encode())
    return before, exported(), report


def test_every_kind_comes_back_as_it_was_exported():
    seed()

    before, after, report = round_trip()

    assert after["data"] == fenced(before["data"])
    assert all(
        count["added"] == len(before["data"][kind]) for kind, count in report["kinds"].items()
    )
    assert "sk-secret-key" not in json.dumps(before) and "ek-secret" not in json.dumps(before)


def test_importing_a_backup_twice_changes_nothing_the_second_time():
    seed()
    document = json.dumps(exported()).encode()

    report = backup_import(source=document)

    assert {count["added"] + count["changed"] for count in report["kinds"].values()} == {0}


text = st.text(st.characters(blacklist_categories=("Cc", "Cs")), max_size=40)
long_text = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=200
)
when = st.datetimes(
    min_value=dt.datetime(1901, 1, 1), max_value=dt.datetime(2199, 1, 1), timezones=st.just(dt.UTC)
)


@st.composite
def datasets(draw: st.DrawFn) -> None:
    """Rows of the owner's main kinds with generated text and dates, written to the database."""
    projects = [
        Project.objects.create(name=draw(text), description=draw(long_text))
        for _ in range(draw(st.integers(0, 3)))
    ]
    for _ in range(draw(st.integers(0, 4))):
        done = draw(st.booleans())
        Task.objects.create(
            title=draw(text),
            details=draw(long_text),
            status="done" if done else "open",
            completed_at=draw(when) if done else None,
            priority=draw(st.sampled_from([1, 2, 3])),
            due_at=draw(st.none() | when),
            project=draw(st.sampled_from([None, *projects])),
            deleted_at=draw(st.none() | when),
        )
    for _ in range(draw(st.integers(0, 3))):
        Note.objects.create(
            title=draw(text), content=draw(long_text), deleted_at=draw(st.none() | when)
        )
    for _ in range(draw(st.integers(0, 3))):
        Memory.objects.create(
            text=draw(long_text) or "x", category=draw(st.sampled_from(Memory.Category.values))
        )
    for _ in range(draw(st.integers(0, 2))):
        Automation.objects.create(
            name=draw(text),
            kind="reminder",
            message=draw(long_text),
            schedule={"type": "cron", "expression": "0 9 * * 1-5"},
            enabled=draw(st.booleans()),
            next_run_at=draw(when),
        )
    Notification.objects.create(title=draw(text), body=draw(long_text))
    for _ in range(draw(st.integers(0, 2))):
        conversation = Conversation.objects.create(title=draw(text), summary=draw(long_text))
        parent = None  # one chain, as the app writes it
        for role in draw(st.lists(st.sampled_from(["user", "assistant"]), max_size=4)):
            parent = Message.objects.create(
                conversation=conversation,
                parent=parent,
                role=role,
                content=draw(long_text),
                status=draw(st.sampled_from(Message.Status.values)),
                tool_activity=draw(st.lists(st.fixed_dictionaries({"tool": text}), max_size=2)),
            )


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_round_trip_over_generated_datasets(data: st.DataObject):
    clear()
    data.draw(datasets())

    before, after, _report = round_trip()

    assert after["data"] == fenced(before["data"])


def test_a_repeating_task_keeps_its_repeat():
    seed()

    _before, after, _report = round_trip()

    repeats = [task["repeat"] for task in after["data"]["tasks"]]
    assert {"type": "weekly", "days": ["mon", "thu"], "time": "08:00"} in repeats
