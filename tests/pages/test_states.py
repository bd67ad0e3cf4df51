"""States the pages must not misstate: a one-off reminder that has run is
done, not paused; half a quiet-hours range is refused (page and API) and changes nothing;
/changes/ says why a change cannot be reverted without claiming a revert was tried, and shows
a reference to another item by its title, linked, never as a raw id."""

from __future__ import annotations

import datetime as dt

import pytest
import time_machine
from django.utils import timezone

from automations import tasks
from automations.models import Automation
from automations.services.crud import automation_create
from memory.services import memories
from talorys.history.models import Change
from talorys.lib.actors import Actor
from talorys.owner.selectors import owner_settings_get
from talorys.owner.services.settings import owner_settings_update
from talorys.workspace import services

CHAT = Actor(source="chat", conversation_id=41, message_id=7)


def _row(body: str, name: str) -> str:
    start = body.index(f">{name}</a>")
    return body[start : body.index("</tr>", start)]


@pytest.mark.usefixtures("eager")
def test_a_one_off_reminder_that_ran_is_done_without_resume(
    signed_in, django_capture_on_commit_callbacks
):
    at = timezone.now() + dt.timedelta(hours=1)
    once = automation_create(
        name="Call the dentist",
        kind="reminder",
        message="Call",
        schedule={"type": "once", "at": at.isoformat()},
    )
    paused = automation_create(
        name="Water plants",
        kind="reminder",
        message="Water",
        schedule={"type": "daily", "time": "08:00"},
    )
    Automation.objects.filter(pk=paused.pk).update(enabled=False, next_run_at=None)
    before = signed_in.get("/automations/").content.decode()
    assert "Active" in _row(before, "Call the dentist") and "Pause Call the dentist" in before

    with time_machine.travel(at + dt.timedelta(minutes=1), tick=False):
        with django_capture_on_commit_callbacks(execute=True):
            tasks.dispatch_and_enqueue()
        body = signed_in.get("/automations/").content.decode()
        detail = signed_in.get(f"/automations/{once.pk}/").content.decode()

    once.refresh_from_db()
    assert (once.enabled, once.run_count) == (False, 1)
    row = _row(body, "Call the dentist")
    assert '<span class="tag ok">Done</span>' in row
    assert "Paused" not in row and "Resume" not in row and "Pause" not in row
    assert "Resume Call the dentist" not in detail and "its one time has passed" in detail
    # A paused repeating automation still says Paused, with Resume.
    assert "Paused" in _row(body, "Water plants") and "Resume Water plants" in body


def test_half_a_quiet_hours_range_is_refused_on_the_page_and_changes_nothing(signed_in):
    owner_settings_update(quiet_hours_start=dt.time(22, 0), quiet_hours_end=dt.time(7, 0))

    page = signed_in.post(
        "/settings/",
        {"section": "quiet_hours", "quiet_hours_start": "23:00", "quiet_hours_end": ""},
        follow=True,
    ).content.decode()

    assert "Quiet hours saved." not in page
    assert "Quiet hours need both a start and an end" in page
    row = owner_settings_get()
    assert (row.quiet_hours_start, row.quiet_hours_end) == (dt.time(22, 0), dt.time(7, 0))


def test_half_a_quiet_hours_range_is_refused_by_the_api(api):
    refused = api.patch("/api/settings", {"quiet_hours_start": "23:00", "quiet_hours_end": None})
    assert refused.status_code == 422
    assert refused.json()["error"]["code"] == "VALIDATION"
    assert "both a start and an end" in refused.json()["error"]["message"]
    row = owner_settings_get()
    assert (row.quiet_hours_start, row.quiet_hours_end) == (None, None)

    # One end alone, the other not stored: refused too; both, then both cleared: fine.
    assert api.patch("/api/settings", {"quiet_hours_end": "07:00"}).status_code == 422
    both = api.patch("/api/settings", {"quiet_hours_start": "23:00", "quiet_hours_end": "07:00"})
    assert both.status_code == 200
    # A PATCH of one end keeps the other.
    assert api.patch("/api/settings", {"quiet_hours_start": "22:30"}).status_code == 200
    assert api.patch("/api/settings", {"quiet_hours_end": None}).status_code == 422
    cleared = api.patch("/api/settings", {"quiet_hours_start": None, "quiet_hours_end": None})
    assert cleared.status_code == 200
    assert (owner_settings_get().quiet_hours_start, owner_settings_get().quiet_hours_end) == (
        None,
        None,
    )


def test_changes_says_why_not_without_claiming_a_revert_and_names_items(signed_in):
    older = memories.memory_create_unchecked(text="Drinks oat milk", actor=CHAT, source="chat")
    newer = memories.memory_create_unchecked(text="Drinks soy milk now", actor=CHAT, source="chat")
    memories.memory_supersede(memory_id=older.pk, by_id=newer.pk, source="chat", actor=CHAT)
    task = services.task_create(title="Book the train", actor=CHAT)
    services.task_update(task_id=task.pk, title="Book the night train")  # the owner's edit

    body = signed_in.get("/changes/").content.decode()

    assert "nothing was reverted" not in body
    created = Change.objects.get(kind="task", object_id=task.pk, action="create")
    start = body.index(f'data-change-id="{created.pk}"')
    assert "The task changed since, so this can no longer be reverted." in body[start:]
    supersede = Change.objects.filter(kind="memory", object_id=older.pk).latest("id")
    start = body.index(f'data-change-id="{supersede.pk}"')
    item = body[start : body.find("data-change-id=", start + 1)]
    assert "Superseded by" in item
    assert f'<ins><a href="/memories/{newer.pk}/">“Drinks soy milk now”</a></ins>' in item
    assert "<del>none</del>" in item and "(none)" not in item
    assert f"→ <ins>{newer.pk}</ins>" not in item


def test_a_half_range_saved_before_the_check_does_not_block_other_settings(api):
    from talorys.owner.models import OwnerSettings

    owner_settings_get()
    OwnerSettings.objects.filter(pk=1).update(quiet_hours_start=dt.time(22, 0))  # an old row

    assert api.patch("/api/settings", {"max_steps_per_turn": 8}).status_code == 200
    assert api.patch("/api/settings", {"quiet_hours_start": "23:00"}).status_code == 422
    assert owner_settings_get().quiet_hours_start == dt.time(22, 0)
