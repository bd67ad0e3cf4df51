"""The calendar feed as calendar apps read it: expanded by recurring_ical_events (Python) and by
ical.js, Thunderbird's library, run by node; a summer-time event in Europe/Berlin lands at its
hour in both. Also: the time zone is written as yearly rules, binned items are left out, and
HEAD answers as GET without a body."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
import recurring_ical_events
import time_machine
from django.test import Client
from icalendar import Calendar

from automations.services.crud import automation_create, automation_delete
from talorys.owner.selectors import owner_settings_get
from talorys.owner.services.settings import owner_settings_update
from talorys.workspace.services.tasks import task_create, task_delete
from tests.services import require_services

UTC = dt.UTC
BERLIN = ZoneInfo("Europe/Berlin")
# A week before the clocks go forward (Sunday 28 March 2027).
NOW = dt.datetime(2027, 3, 20, 12, 0, tzinfo=UTC)
ICALJS = Path(__file__).parent / "icaljs"


@pytest.fixture
def berlin(db):
    owner_settings_update(time_zone="Europe/Berlin")
    with time_machine.travel(NOW, tick=False):
        yield


def feed_bytes() -> bytes:
    response = Client().get(f"/calendar/{owner_settings_get().calendar_secret}.ics")
    assert response.status_code == 200
    return response.content


def summer_feed() -> tuple[bytes, dict[str, list[dt.datetime]]]:
    """A task due on a summer morning, a daily reminder across the change, a one-time reminder in
    summer; with the UTC instants each must have."""
    task = task_create(title="Dentist", due_at=dt.datetime(2027, 7, 1, 9, 0, tzinfo=BERLIN))
    daily = automation_create(
        name="Stretch", kind="reminder", schedule={"type": "daily", "time": "08:00"}
    )
    once = automation_create(
        name="Flight",
        kind="reminder",
        schedule={"type": "once", "at": "2027-08-14T06:30:00+02:00"},
    )
    expected = {
        f"task-{task.pk}@talorys": [dt.datetime(2027, 7, 1, 7, 0, tzinfo=UTC)],
        # 08:00 CET is 07:00Z until the 27th, 08:00 CEST is 06:00Z from the 28th.
        f"automation-{daily.pk}@talorys": [
            dt.datetime(2027, 3, 21, 7, 0, tzinfo=UTC),
            dt.datetime(2027, 3, 22, 7, 0, tzinfo=UTC),
            *[dt.datetime(2027, 3, day, 7, 0, tzinfo=UTC) for day in range(23, 28)],
            dt.datetime(2027, 3, 28, 6, 0, tzinfo=UTC),
            dt.datetime(2027, 3, 29, 6, 0, tzinfo=UTC),
        ],
        f"automation-{once.pk}@talorys": [dt.datetime(2027, 8, 14, 4, 30, tzinfo=UTC)],
    }
    return feed_bytes(), expected


def test_the_zone_is_written_as_yearly_rules_as_google_and_outlook_do(berlin):
    task_create(title="Dentist", due_at=dt.datetime(2027, 7, 1, 9, 0, tzinfo=BERLIN))
    text = feed_bytes().decode()
    calendar = Calendar.from_ical(text)
    (zone,) = calendar.walk("VTIMEZONE")
    assert str(zone["TZID"]) == "Europe/Berlin"
    parts = {part.name: part for part in zone.subcomponents}
    assert set(parts) == {"STANDARD", "DAYLIGHT"}
    assert parts["DAYLIGHT"]["RRULE"].to_ical() == b"FREQ=YEARLY;BYDAY=-1SU;BYMONTH=3"
    assert parts["STANDARD"]["RRULE"].to_ical() == b"FREQ=YEARLY;BYDAY=-1SU;BYMONTH=10"
    assert parts["DAYLIGHT"]["TZOFFSETTO"].td == dt.timedelta(hours=2)
    assert parts["STANDARD"]["TZOFFSETTO"].td == dt.timedelta(hours=1)
    assert "RDATE" not in text


def test_recurring_ical_events_places_summer_events_at_their_hour(berlin):
    body, expected = summer_feed()
    calendar = Calendar.from_ical(body)
    found: dict[str, list[dt.datetime]] = {}
    window = recurring_ical_events.of(calendar).between(NOW, dt.datetime(2027, 12, 31))
    for event in window:
        found.setdefault(str(event["UID"]), []).append(event.start)
    for uid, starts in expected.items():
        assert sorted(found[uid])[: len(starts)] == starts, uid


def _icaljs_dir() -> Path | None:
    """read.mjs with ical.js installed from the pinned lock into a cache dir; None when node or
    npm is missing or the registry cannot be reached."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        return None
    lock = (ICALJS / "package-lock.json").read_bytes()
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    target = cache / "talorys-tests" / f"icaljs-{hashlib.sha256(lock).hexdigest()[:16]}"
    if not (target / "node_modules" / "ical.js").is_dir():
        target.mkdir(parents=True, exist_ok=True)
        for name in ("package.json", "package-lock.json"):
            shutil.copy(ICALJS / name, target / name)
        done = subprocess.run(
            ["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund"],
            cwd=target,
            capture_output=True,
            timeout=120,
        )
        if done.returncode != 0:
            return None
    shutil.copy(ICALJS / "read.mjs", target / "read.mjs")
    return target


def test_icaljs_as_in_thunderbird_places_summer_events_at_their_hour(berlin):
    where = _icaljs_dir()
    if where is None:
        reason = "node/npm missing, or ical.js could not be installed from the npm registry"
        if require_services():
            pytest.fail(reason)
        pytest.skip(reason)
    body, expected = summer_feed()
    done = subprocess.run(
        ["node", "read.mjs", "9"], cwd=where, input=body, capture_output=True, timeout=60
    )
    assert done.returncode == 0, done.stderr.decode()
    found = {
        event["uid"]: [dt.datetime.fromisoformat(start) for start in event["starts"]]
        for event in json.loads(done.stdout)
    }
    for uid, starts in expected.items():
        assert found[uid] == starts, uid


def test_binned_tasks_and_automations_are_left_out(berlin):
    kept = task_create(title="Kept", due_at=dt.datetime(2027, 3, 22, 9, 0, tzinfo=BERLIN))
    binned = task_create(title="Binned", due_at=dt.datetime(2027, 3, 22, 9, 0, tzinfo=BERLIN))
    task_delete(task_id=binned.pk)
    gone = automation_create(
        name="Gone", kind="reminder", schedule={"type": "daily", "time": "07:00"}
    )
    automation_delete(automation_id=gone.pk)
    uids = {str(event["UID"]) for event in Calendar.from_ical(feed_bytes()).events}
    assert uids == {f"task-{kept.pk}@talorys"}


def test_head_answers_as_get_without_a_body(berlin):
    task_create(title="Dentist", due_at=dt.datetime(2027, 7, 1, 9, 0, tzinfo=BERLIN))
    path = f"/calendar/{owner_settings_get().calendar_secret}.ics"
    got = Client().get(path)
    head = Client().head(path)
    assert head.status_code == 200
    assert head.content == b""
    assert int(head["Content-Length"]) == len(got.content) > 0
    for header in ("Content-Type", "Cache-Control", "Referrer-Policy", "Content-Disposition"):
        assert head[header] == got[header]
    assert Client().head("/calendar/wrong.ics").status_code == 404
    assert Client().post(path).status_code == 405


@pytest.mark.parametrize(
    ("key", "daylight", "standard"),
    [
        ("America/New_York", "FREQ=YEARLY;BYDAY=2SU;BYMONTH=3", "FREQ=YEARLY;BYDAY=1SU;BYMONTH=11"),
        ("Australia/Sydney", "FREQ=YEARLY;BYDAY=1SU;BYMONTH=10", "FREQ=YEARLY;BYDAY=1SU;BYMONTH=4"),
        ("Asia/Tokyo", None, None),
    ],
)
def test_other_zones_rules(key, daylight, standard):
    from automations.vtimezone import vtimezone

    zone = vtimezone(key)
    assert zone is not None
    parts = {part.name: part for part in zone.subcomponents}
    if daylight is None:
        assert set(parts) == {"STANDARD"} and "RRULE" not in parts["STANDARD"]
        return
    assert parts["DAYLIGHT"]["RRULE"].to_ical().decode() == daylight
    assert parts["STANDARD"]["RRULE"].to_ical().decode() == standard
    # The first onset is a day the rule itself gives (RFC 5545: DTSTART is the first instance).
    assert parts["DAYLIGHT"]["DTSTART"].dt.year == 1970


def test_a_zone_rules_cannot_say_keeps_icalendars():
    from automations.vtimezone import vtimezone

    # Israel changes at 26:00 on a Thursday ("M3.4.4/26"): no RRULE day holds it.
    assert vtimezone("Asia/Jerusalem") is None
