"""One reader of dates in words (talorys/lib/when.py) behind every entry point: each phrase gives
the same title and due date read by the lib function, added on the tasks page, given to the task
form's Due in words (or, for a repeating phrase, its Repeats), posted by the `q` dialog (its endpoint, POST /api/tasks/quick, with the
session), posted with an API token, and said to the demo model in a chat turn.

"Now" is frozen on Thursday 3 December 2026, 12:00 in Paris, so the weekday rule shows: "next
friday" is tomorrow, "thursday" a week later, "this thursday" today."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any
from zoneinfo import ZoneInfo

import pytest
import time_machine

from talorys.accounts.services import api_token_create
from talorys.lib.schedules import next_after, repeat_parse
from talorys.lib.when import understand
from talorys.owner.services.settings import owner_settings_update
from talorys.workspace import services
from talorys.workspace.models import Task
from tests.agent.test_runner import turn

pytestmark = pytest.mark.django_db(transaction=True)  # the demo's turn commits its rows
PARIS = ZoneInfo("Europe/Paris")
NOW = dt.datetime(2026, 12, 3, 12, 0, tzinfo=PARIS)  # a Thursday

# (phrase, title, due as (year, month, day, hour, minute) in Paris, or None)
PHRASES = [
    ("pick up parcel friday 5pm", "pick up parcel", (2026, 12, 4, 17, 0)),
    ("call Ana next tuesday at 6pm", "call Ana", (2026, 12, 8, 18, 0)),
    ("call Ana on tuesday at 6pm", "call Ana", (2026, 12, 8, 18, 0)),
    ("call mom tomorrow", "call mom", (2026, 12, 4, 9, 0)),
    ("water plants in 3 days", "water plants", (2026, 12, 6, 9, 0)),
    ("pay rent next friday", "pay rent", (2026, 12, 4, 9, 0)),  # on a Thursday: tomorrow
    ("book the dentist thursday", "book the dentist", (2026, 12, 10, 9, 0)),  # never today
    ("book the dentist this thursday 6pm", "book the dentist", (2026, 12, 3, 18, 0)),
    ("buy a gift dec 24", "buy a gift", (2026, 12, 24, 9, 0)),
    ("renew passport 3 jan 14:30", "renew passport", (2027, 1, 3, 14, 30)),
    ("standup 5pm", "standup", (2026, 12, 3, 17, 0)),  # a time only, later today
    ("standup at 9", "standup", (2026, 12, 4, 9, 0)),  # a time only, gone today: tomorrow
    ("call Sam tonight at 9", "call Sam", (2026, 12, 3, 21, 0)),
    ("send the report in 2 hours", "send the report", (2026, 12, 3, 14, 0)),
    ("plan holidays next week", "plan holidays", (2026, 12, 10, 9, 0)),
    ("buy milk", "buy milk", None),  # no date at all
]
# Repeating phrases: the task repeats, due at the first occurrence from now.
# (phrase, title, first due as above, repeat)
REPEATING = [
    (
        "water plants every monday 8am",
        "water plants",
        (2026, 12, 7, 8, 0),
        {"type": "weekly", "days": ["mon"], "time": "08:00"},
    ),
    (
        "pay rent every month on the 1st",
        "pay rent",
        (2027, 1, 1, 9, 0),
        {"type": "monthly", "day": 1, "time": "09:00"},
    ),
    (
        "every day at 7:30 stretch",
        "stretch",
        (2026, 12, 4, 7, 30),
        {"type": "daily", "time": "07:30"},
    ),
]

Read = tuple[str, dt.datetime | None, dict[str, Any] | None]


def only_task() -> Read:
    task = Task.objects.get()
    Task.objects.all().delete()
    return task.title, task.due_at, task.repeat


def by_lib(phrase: str, clients: dict[str, Any]) -> Read:
    got = understand(phrase, zone=PARIS)
    if got.schedule is None:
        return got.title, got.due, None
    first = next_after(repeat_parse(got.schedule), dt.datetime.now(dt.UTC), PARIS)
    return got.title, first, got.schedule


def by_tasks_page(phrase: str, clients: dict[str, Any]) -> Read:
    # "seen": the hint showed what was read (without it the page shows it first).
    response = clients["page"].post("/tasks/quick-add/", {"title": phrase, "seen": phrase})
    assert response.status_code == 303
    return only_task()


def by_task_form(phrase: str, clients: dict[str, Any]) -> Read:
    """The form takes the title and the date apart: the words the reader cut are typed in Due
    in words (Repeats, for a repeating phrase), and the title in Title."""
    got = understand(phrase, zone=PARIS)
    task = services.task_create(title="Something")
    words = "repeat_words" if got.schedule else "due_words"
    typed = {"title": got.title, words: got.words, "repeat_was": "", "version": task.version}
    assert clients["page"].post(f"/tasks/{task.pk}/", typed).status_code == 303
    return only_task()


def by_q_dialog(phrase: str, clients: dict[str, Any]) -> Read:
    response = clients["session"].post("/api/tasks/quick", {"text": phrase})
    assert response.status_code == 201, response.content
    return only_task()


def by_api_token(phrase: str, clients: dict[str, Any]) -> Read:
    headers = {"Authorization": f"Bearer {clients['token']}"}
    response = clients["anon"].post("/api/tasks/quick", {"text": phrase}, headers=headers)
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["read"]["title"] == body["title"]
    return only_task()


def by_demo_chat(phrase: str, clients: dict[str, Any]) -> Read:
    turn(text=f"add {phrase}")
    title, due, repeat = only_task()
    assert title[:1].isupper()  # the demo writes a title capitalised, as a model would
    return title[:1].lower() + title[1:], due, repeat


ENTRY_POINTS: dict[str, Callable[[str, dict[str, Any]], Read]] = {
    "lib": by_lib,
    "tasks page": by_tasks_page,
    "task form": by_task_form,
    "q dialog": by_q_dialog,
    "API token": by_api_token,
    "demo chat": by_demo_chat,
}


@pytest.fixture
def clients(client, api, anon_api, owner) -> dict[str, Any]:
    owner_settings_update(time_zone="Europe/Paris")
    client.force_login(owner)
    _token, raw = api_token_create(user=owner, name="shortcut", scope="write")
    return {"page": client, "session": api, "anon": anon_api, "token": raw}


@pytest.mark.parametrize(("phrase", "title", "due"), PHRASES, ids=[p[0] for p in PHRASES])
def test_each_entry_point_reads_the_phrase_alike(clients, phrase, title, due):
    expected = (title, dt.datetime(*due, tzinfo=PARIS) if due else None, None)
    with time_machine.travel(NOW, tick=False):
        got = {name: read(phrase, clients) for name, read in ENTRY_POINTS.items()}
    assert got == dict.fromkeys(ENTRY_POINTS, expected)


@pytest.mark.parametrize(
    ("phrase", "title", "due", "repeat"), REPEATING, ids=[p[0] for p in REPEATING]
)
def test_each_entry_point_reads_a_repeating_phrase_alike(clients, phrase, title, due, repeat):
    expected = (title, dt.datetime(*due, tzinfo=PARIS), repeat)
    with time_machine.travel(NOW, tick=False):
        got = {name: read(phrase, clients) for name, read in ENTRY_POINTS.items()}
    assert got == dict.fromkeys(ENTRY_POINTS, expected)
