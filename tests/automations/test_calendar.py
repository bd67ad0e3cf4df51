"""The calendar feed (/calendar/<secret>.ics): parsed by icalendar as a calendar app would, its
recurrence expanded and matched against the app's own next runs (across a DST change), and the
secret: a wrong one is a 404, a rotation ends the old URL, a token never sees or rotates it, the
settings page shows it and a backup leaves it out."""

from __future__ import annotations

import datetime as dt
import json
from zoneinfo import ZoneInfo

import pytest
import time_machine
from dateutil import rrule
from django.test import Client
from icalendar import Calendar

from automations.calendar import CRON_OCCURRENCES
from automations.services.crud import automation_create, automation_pause
from backup.services import backup_export
from talorys.accounts.services import api_token_create
from talorys.lib.schedules import schedule_parse, upcoming
from talorys.owner.selectors import owner_settings_get
from talorys.owner.services.settings import owner_settings_update
from talorys.workspace.services.tasks import task_create, task_update

UTC = dt.UTC
PARIS = ZoneInfo("Europe/Paris")
# A week before Europe's clocks go forward (Sunday 28 March 2027).
NOW = dt.datetime(2027, 3, 20, 12, 0, tzinfo=UTC)


@pytest.fixture
def paris(db):
    owner_settings_update(time_zone="Europe/Paris")
    with time_machine.travel(NOW, tick=False):
        yield


def feed_path() -> str:
    return f"/calendar/{owner_settings_get().calendar_secret}.ics"


def read_feed(path: str | None = None) -> Calendar:
    response = Client().get(path or feed_path())  # no session: the URL is the capability
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/calendar")
    assert "no-store" in response["Cache-Control"]
    return Calendar.from_ical(response.content)


def events_by_uid(calendar: Calendar) -> dict[str, object]:
    return {str(event["UID"]): event for event in calendar.events}


def test_the_feed_has_open_tasks_with_a_due_date_and_reminders_next_runs(paris):
    due = dt.datetime(2027, 3, 22, 9, 0, tzinfo=PARIS)
    task = task_create(title="Pay the rent", details="By transfer", due_at=due)
    task_create(title="No date")
    done = task_create(title="Done already", due_at=due)
    task_update(task_id=done.pk, status="done")
    reminder = automation_create(
        name="Call mum",
        kind="reminder",
        message="Ask about the trip",
        schedule={"type": "once", "at": "2027-03-25T18:00:00+01:00"},
    )
    paused = automation_create(
        name="Paused", kind="reminder", schedule={"type": "daily", "time": "07:00"}
    )
    automation_pause(automation_id=paused.pk)

    calendar = read_feed()
    events = events_by_uid(calendar)
    assert set(events) == {f"task-{task.pk}@talorys", f"automation-{reminder.pk}@talorys"}
    task_event = events[f"task-{task.pk}@talorys"]
    assert task_event.start == due and task_event.start.tzinfo.key == "Europe/Paris"
    assert str(task_event["SUMMARY"]) == "Pay the rent"
    reminder_event = events[f"automation-{reminder.pk}@talorys"]
    assert reminder_event.start == dt.datetime(2027, 3, 25, 17, 0, tzinfo=UTC)
    # Names and times only: what a task or reminder says beyond its name stays out by default.
    assert "DESCRIPTION" not in task_event
    assert "Ask about the trip" not in str(reminder_event["DESCRIPTION"])
    assert "RRULE" not in reminder_event
    assert calendar.timezones and str(calendar.timezones[0]["TZID"]) == "Europe/Paris"


def expand(event, count: int) -> list[dt.datetime]:
    """The event's first ``count`` occurrences as a calendar app computes them: the RRULE over
    the local wall time, each wall time read in the zone (RFC 5545: a time in a gap is shifted
    by it, a repeated one is its first occurrence: ``fold=0``)."""
    start = event.start
    zone = start.tzinfo
    rule = rrule.rrulestr(event["RRULE"].to_ical().decode(), dtstart=start.replace(tzinfo=None))
    walls = list(rule.xafter(start.replace(tzinfo=None), count=count, inc=True))
    return [wall.replace(tzinfo=zone, fold=0).astimezone(UTC) for wall in walls]


@pytest.mark.parametrize(
    "schedule",
    [
        # 02:30 on Sunday 28 March does not exist in Paris: both run it at 03:30 CEST.
        {"type": "weekly", "days": ["wed", "sun"], "time": "02:30"},
        {"type": "weekly", "days": ["mon"], "time": "09:00"},
        {"type": "daily", "time": "02:30"},
        {"type": "monthly", "day": 31, "time": "08:15"},
    ],
)
def test_a_routines_rrule_expands_to_the_apps_own_runs_across_dst(paris, schedule):
    routine = automation_create(name="Routine", kind="reminder", schedule=schedule)
    [event] = read_feed().events
    assert "RRULE" in event
    count = 12
    expected = upcoming(schedule_parse(schedule), NOW, PARIS, count)
    assert expected[0] == routine.next_run_at
    # The runs do cross the change of offset (+01:00 to +02:00).
    assert {run.astimezone(PARIS).utcoffset() for run in expected} == {
        dt.timedelta(hours=1),
        dt.timedelta(hours=2),
    }
    assert expand(event, count) == expected


def test_a_repeating_tasks_rrule_expands_to_the_dates_completing_it_moves_to(paris):
    repeat = {"type": "weekly", "days": ["mon", "thu"], "time": "08:00"}
    task = task_create(title="Water plants", repeat=repeat)  # across the change to summer time
    cron = task_create(title="Standup", repeat={"type": "cron", "expression": "0 9 * * 1-5"})
    events = events_by_uid(read_feed())
    event = events[f"task-{task.pk}@talorys"]
    expected = [task.due_at, *upcoming(schedule_parse(repeat), task.due_at, PARIS, 5)]
    assert expand(event, 6) == expected
    assert "RRULE" not in events[f"task-{cron.pk}@talorys"]


def test_the_gap_run_is_where_the_app_runs_it(paris):
    automation_create(
        name="Night", kind="reminder", schedule={"type": "weekly", "days": ["sun"], "time": "02:30"}
    )
    [event] = read_feed().events
    runs = expand(event, 3)
    assert runs[1] == dt.datetime(2027, 3, 28, 1, 30, tzinfo=UTC)  # 03:30 CEST
    assert runs[2] == dt.datetime(2027, 4, 4, 0, 30, tzinfo=UTC)  # 02:30 CEST


def test_a_cron_schedule_is_its_next_runs_as_separate_events(paris):
    schedule = {"type": "cron", "expression": "0 9 * * 1-5"}
    routine = automation_create(name="Standup", kind="reminder", schedule=schedule)
    events = read_feed().events
    assert all("RRULE" not in event for event in events)
    assert len({str(event["UID"]) for event in events}) == CRON_OCCURRENCES
    starts = sorted(event.start.astimezone(UTC) for event in events)
    assert starts == [
        routine.next_run_at,
        *upcoming(schedule_parse(schedule), routine.next_run_at, PARIS, CRON_OCCURRENCES - 1),
    ]


def test_a_wrong_secret_is_a_plain_404(paris):
    secret = owner_settings_get().calendar_secret
    for wrong in (
        "nope",
        secret[:-1],
        secret + "x",
        secret.upper() if secret.upper() != secret else "A" * len(secret),
    ):
        response = Client().get(f"/calendar/{wrong}.ics")
        assert response.status_code == 404
        assert secret.encode() not in response.content
    assert Client().get("/calendar/.ics").status_code == 404


def test_rotating_ends_the_old_url_at_once(paris, api):
    old_url = api.get("/api/settings").json()["calendar_url"]
    old_path = old_url.removeprefix("http://testserver")
    assert old_path == feed_path()
    response = api.post("/api/settings/calendar/rotate")
    assert response.status_code == 200, response.content
    new_url = response.json()["calendar_url"]
    assert new_url != old_url
    assert Client().get(old_path).status_code == 404
    read_feed(new_url.removeprefix("http://testserver"))
    assert api.get("/api/settings").json()["calendar_url"] == new_url


@pytest.mark.parametrize("scope", ["read", "write"])
def test_an_api_token_neither_reads_nor_rotates_the_secret(paris, owner, scope):
    _token, raw = api_token_create(user=owner, name="script", scope=scope)
    script = Client(enforce_csrf_checks=True)
    headers = {"Authorization": f"Bearer {raw}"}
    secret = owner_settings_get().calendar_secret
    read = script.get("/api/settings", headers=headers)
    assert read.status_code == 200
    assert read.json()["calendar_url"] is None
    assert secret not in read.content.decode()
    if scope == "write":
        patched = script.patch(
            "/api/settings",
            json.dumps({"quiet_hours_start": None}),
            content_type="application/json",
            headers=headers,
        )
        assert patched.status_code == 200 and secret not in patched.content.decode()
    rotate = script.post("/api/settings/calendar/rotate", headers=headers)
    assert rotate.status_code in (401, 403)
    assert owner_settings_get().calendar_secret == secret


def test_the_settings_page_shows_the_url_and_makes_a_new_one(paris, client, owner):
    client.force_login(owner)
    old = feed_path()
    body = client.get("/settings/").content.decode()
    assert f"http://testserver{old}" in body
    response = client.post("/settings/", {"section": "calendar_rotate"}, follow=True)
    assert response.status_code == 200
    new = feed_path()
    assert new != old and f"http://testserver{new}" in response.content.decode()
    assert Client().get(old).status_code == 404


def test_a_backup_never_carries_the_secret(paris):
    secret = owner_settings_get().calendar_secret
    exported = b"".join(backup_export())
    assert b'"settings"' in exported
    assert secret.encode() not in exported and b"calendar_secret" not in exported


def details_feed_events() -> tuple[object, object]:
    """A task with details and a reminder with a text, as the feed shows them now."""
    task = task_create(
        title="See the doctor",
        details="Bring the test results",
        due_at=dt.datetime(2027, 3, 22, 9, 0, tzinfo=PARIS),
    )
    reminder = automation_create(
        name="Pills",
        kind="reminder",
        message="Two of the blue ones",
        schedule={"type": "daily", "time": "08:00"},
    )
    events = events_by_uid(read_feed())
    return events[f"task-{task.pk}@talorys"], events[f"automation-{reminder.pk}@talorys"]


def test_the_feed_carries_details_only_once_the_owner_turns_them_on(paris):
    assert owner_settings_get().calendar_feed_details is False
    task_event, reminder_event = details_feed_events()
    assert "DESCRIPTION" not in task_event
    assert str(reminder_event["DESCRIPTION"]) == "every day at 08:00 (Europe/Paris)"

    owner_settings_update(calendar_feed_details=True)

    events = events_by_uid(read_feed())
    assert str(events[str(task_event["UID"])]["DESCRIPTION"]) == "Bring the test results"
    shown = str(events[str(reminder_event["UID"])]["DESCRIPTION"])
    assert shown == "every day at 08:00 (Europe/Paris)\n\nTwo of the blue ones"


def test_the_settings_page_says_details_are_off_and_turns_them_on(paris, client, owner):
    client.force_login(owner)
    body = client.get("/settings/").content.decode()
    assert "Task details and reminder texts in the feed: <strong>off</strong>" in body

    response = client.post(
        "/settings/", {"section": "calendar_details", "calendar_feed_details": "1"}, follow=True
    )

    assert response.status_code == 200
    assert owner_settings_get().calendar_feed_details is True
    assert "in the feed: <strong>on</strong>" in response.content.decode()
    task_event, _reminder_event = details_feed_events()
    assert str(task_event["DESCRIPTION"]) == "Bring the test results"
    client.post("/settings/", {"section": "calendar_details"})
    assert owner_settings_get().calendar_feed_details is False


@pytest.mark.parametrize("scope", ["read", "write"])
def test_only_the_owners_session_turns_details_on(paris, api, owner, scope):
    _token, raw = api_token_create(user=owner, name="script", scope=scope)
    refused = Client().patch(
        "/api/settings",
        {"calendar_feed_details": True},
        content_type="application/json",
        headers={"Authorization": f"Bearer {raw}"},
    )
    assert refused.status_code in (401, 403), refused.content
    assert owner_settings_get().calendar_feed_details is False

    response = api.patch("/api/settings", {"calendar_feed_details": True})

    assert response.status_code == 200, response.content
    assert response.json()["calendar_feed_details"] is True
