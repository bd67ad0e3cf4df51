"""The automation pages: the list, the schedule form (once, daily, weekly, monthly, cron in the
owner's zone) with its next runs, pause/resume/delete, and each automation's run history."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest
from django.utils import timezone

from automations.models import Automation, AutomationRun
from automations.services.crud import automation_create, automation_pause
from talorys.notifications.models import Notification
from talorys.owner.services.settings import owner_settings_update

PARIS = ZoneInfo("Europe/Paris")


@pytest.fixture
def signed_in(signed_in):
    owner_settings_update(time_zone="Europe/Paris")
    return signed_in


def stretch(**schedule) -> Automation:
    return automation_create(
        name="Stretch",
        kind="reminder",
        message="Stand up and stretch",
        schedule=schedule or {"type": "daily", "time": "08:30"},
    )


def form(**fields) -> dict:
    return {"name": "Water the plants", "kind": "reminder", "message": "", **fields}


def local(value: dt.datetime) -> dt.datetime:
    return value.astimezone(PARIS)


# --- the list -------------------------------------------------------------------------------------


def test_the_list_says_what_each_does_when_and_its_next_run_in_the_owner_zone(signed_in):
    daily = stretch()
    prompt = automation_create(
        name="Weekly review",
        kind="agent_prompt",
        message="Summarise my week",
        schedule={"type": "weekly", "days": ["fri"], "time": "17:00"},
    )
    automation_pause(automation_id=prompt.pk)

    page = signed_in.get("/automations/").content.decode()

    assert "Stretch" in page and "Reminder" in page and "Stand up and stretch" in page
    assert "Weekly review" in page and "Prompt" in page
    assert "every day at 08:30 (Europe/Paris)" in page
    assert "every Fri at 17:00 (Europe/Paris)" in page
    assert local(daily.next_run_at).strftime("%H:%M") == "08:30"
    # Relative in the list ("tomorrow 08:30"), the full time in its title.
    assert f'title="{local(daily.next_run_at).strftime("%-d %b %Y, 08:30")}"' in page
    assert "Active" in page and "Paused" in page
    assert f'action="/automations/{prompt.pk}/resume/"' in page
    assert f'action="/automations/{daily.pk}/pause/"' in page


def test_the_pages_are_the_owner_s_only(client, db):
    for path in ("/automations/", "/automations/new/", "/automations/preview/"):
        response = client.get(path)
        assert response.status_code == 302 and "/login/" in response["Location"]


def test_the_list_of_two_thousand_is_paginated_in_a_few_queries(
    signed_in, django_assert_max_num_queries
):
    now = timezone.now()
    Automation.objects.bulk_create(
        Automation(
            name=f"Routine {i}",
            kind="reminder",
            schedule={"type": "daily", "time": "08:00"},
            next_run_at=now + dt.timedelta(minutes=i),
        )
        for i in range(2_000)
    )

    # The session, the user, the owner's zone, the count, one page, the session's renewal.
    with django_assert_max_num_queries(8):
        page = signed_in.get("/automations/")

    assert page.status_code == 200
    body = page.content.decode()
    assert body.count("every day at 08:00 (Europe/Paris)") == 50
    assert "Page 1 of 40" in body and "Routine 0<" in body and "Routine 50<" not in body


# --- creating with the schedule form ---------------------------------------------------------------


def test_a_daily_automation_made_with_the_form_runs_at_that_time_in_the_owner_zone(signed_in):
    response = signed_in.post(
        "/automations/new/", form(schedule_type="daily", schedule_time="08:30")
    )

    automation = Automation.objects.get()
    assert response.status_code == 303
    assert response["Location"] == f"/automations/{automation.pk}/"
    assert automation.schedule == {"type": "daily", "time": "08:30"}
    assert local(automation.next_run_at).strftime("%H:%M") == "08:30"
    detail = signed_in.get(response["Location"]).content.decode()
    assert "Automation created." in detail
    assert local(automation.next_run_at).strftime("%-d %b %Y, 08:30") in detail


@pytest.mark.parametrize(
    ("fields", "schedule"),
    [
        (
            {"schedule_type": "weekly", "schedule_days": ["thu", "mon"], "schedule_time": "18:00"},
            {"type": "weekly", "days": ["mon", "thu"], "time": "18:00"},
        ),
        (
            {"schedule_type": "monthly", "schedule_day": "31", "schedule_time": "09:00"},
            {"type": "monthly", "day": 31, "time": "09:00"},
        ),
        (
            {"schedule_type": "cron", "schedule_cron": "0 9 * * 1-5"},
            {"type": "cron", "expression": "0 9 * * 1-5"},
        ),
    ],
)
def test_each_kind_of_schedule_becomes_the_spec_the_api_takes(signed_in, fields, schedule):
    # The fields of other kinds, left filled in, are ignored.
    fields = {"schedule_date": "2030-01-01", "schedule_day": "3", **fields}
    response = signed_in.post("/automations/new/", form(**fields))

    assert response.status_code == 303
    assert Automation.objects.get().schedule == schedule


def test_a_once_is_the_wall_clock_time_in_the_owner_zone(signed_in):
    response = signed_in.post(
        "/automations/new/",
        form(schedule_type="once", schedule_date="2030-07-14", schedule_time="09:00"),
    )

    assert response.status_code == 303
    automation = Automation.objects.get()
    expected = dt.datetime(2030, 7, 14, 9, 0, tzinfo=PARIS)
    assert automation.next_run_at == expected  # 07:00 UTC: summer time in Paris
    assert dt.datetime.fromisoformat(automation.schedule["at"]) == expected


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"schedule_type": "cron", "schedule_cron": "every morning"}, "schedule_cron", "five cron"),
        (
            {"schedule_type": "once", "schedule_date": "2020-01-01", "schedule_time": "09:00"},
            "schedule_date",
            "Date: That time has passed",
        ),
        (
            {"schedule_type": "weekly", "schedule_time": "09:00"},
            "schedule_days",
            "at least one day",
        ),
        (
            {"schedule_type": "monthly", "schedule_day": "32", "schedule_time": "09:00"},
            "schedule_day",
            "Day of the month must be 31 or less.",
        ),
        (
            {"schedule_type": "monthly", "schedule_day": "-5", "schedule_time": "09:00"},
            "schedule_day",
            "Day of the month must be 1 or more.",
        ),
        ({"schedule_type": "daily", "schedule_time": "25:00"}, "schedule_time", "valid time"),
        ({"schedule_type": "daily", "schedule_time": ""}, "schedule_time", "Give a time"),
        (
            {"schedule_type": "once", "schedule_date": "2300-01-01", "schedule_time": "09:00"},
            "schedule_date",
            "Date must be between 1900-01-01 and 2200-01-01",
        ),
    ],
)
def test_bad_schedules_are_refused_at_their_field_and_create_nothing(
    signed_in, fields, field, message
):
    response = signed_in.post("/automations/new/", form(**fields))

    assert response.status_code == 400
    errors = response.context["form"].errors
    assert message in " ".join(errors.get(field, [])), errors
    assert "Input should" not in str(errors) and "schedule." not in str(errors)
    assert "Water the plants" in response.content.decode()  # the form, as posted
    assert not Automation.objects.exists()


def test_a_prompt_without_its_prompt_is_refused_by_the_service(signed_in):
    response = signed_in.post(
        "/automations/new/",
        form(kind="agent_prompt", schedule_type="daily", schedule_time="08:00"),
    )

    assert response.status_code == 400
    said = " ".join(response.context["form"].errors["message"])
    assert said == "Text or prompt is empty: fill it in."  # the page's label, not the API's name
    assert not Automation.objects.exists()


# --- editing ----------------------------------------------------------------------------------------


def test_the_edit_form_shows_the_stored_schedule_and_its_next_runs(signed_in):
    automation = stretch(type="weekly", days=["mon", "fri"], time="07:15")

    page = signed_in.get(f"/automations/{automation.pk}/edit/")

    assert page.status_code == 200
    form_ = page.context["form"]
    assert form_["schedule_type"].value() == "weekly"
    assert form_["schedule_days"].value() == ["mon", "fri"]
    assert page.context["schedule_text"] == "every Mon, Fri at 07:15 (Europe/Paris)"
    runs = page.context["upcoming"]
    assert len(runs) == 5
    assert [local(dt.datetime.fromisoformat(r["at"])).strftime("%a %H:%M") for r in runs[:2]] in (
        [["Mon 07:15", "Fri 07:15"], ["Fri 07:15", "Mon 07:15"]]
    )
    assert runs[0]["label"] in page.content.decode()


def test_renaming_keeps_the_slot_and_a_new_schedule_re_arms(signed_in):
    automation = stretch()
    url = f"/automations/{automation.pk}/edit/"
    same = {"schedule_type": "daily", "schedule_time": "08:30"}

    renamed = signed_in.post(url, form(name="Stretch a bit", message="Stand up", **same))
    after_rename = Automation.objects.get(pk=automation.pk)
    moved = signed_in.post(
        url, form(name="Stretch a bit", schedule_type="daily", schedule_time="21:00")
    )
    after_move = Automation.objects.get(pk=automation.pk)

    assert (renamed.status_code, moved.status_code) == (303, 303)
    assert (after_rename.name, after_rename.message) == ("Stretch a bit", "Stand up")
    assert after_rename.version == automation.version  # a queued run is still good
    assert after_move.version == automation.version + 1
    assert local(after_move.next_run_at).strftime("%H:%M") == "21:00"
    assert after_move.kind == "reminder"  # fixed once made, whatever is posted


def test_a_bad_edit_changes_nothing(signed_in):
    automation = stretch()

    response = signed_in.post(
        f"/automations/{automation.pk}/edit/",
        form(name="Renamed", schedule_type="monthly", schedule_day="32", schedule_time="09:00"),
    )

    assert response.status_code == 400
    after = Automation.objects.get(pk=automation.pk)
    assert (after.name, after.schedule, after.version) == (
        "Stretch",
        automation.schedule,
        automation.version,
    )


# --- pause, resume, delete ----------------------------------------------------------------------------


def test_pause_resume_and_delete_to_the_bin(signed_in):
    automation = stretch()
    base = f"/automations/{automation.pk}"

    paused = signed_in.post(f"{base}/pause/", {"next": "/automations/"})
    assert paused.status_code == 303 and paused["Location"] == "/automations/"
    assert Automation.objects.get(pk=automation.pk).next_run_at is None
    resumed = signed_in.post(f"{base}/resume/")
    assert resumed["Location"] == f"{base}/"
    assert Automation.objects.get(pk=automation.pk).enabled

    deleted = signed_in.post(f"{base}/delete/")

    assert deleted["Location"] == "/automations/"
    assert Automation.objects.get(pk=automation.pk).deleted_at is not None
    assert "Stretch" not in signed_in.get("/automations/").content.decode()
    assert signed_in.get(f"{base}/").status_code == 404
    assert signed_in.get(f"{base}/edit/").status_code == 404


def test_resuming_a_past_once_says_why_and_stays_paused(signed_in):
    once = automation_create(
        name="Call mum",
        kind="reminder",
        schedule={"type": "once", "at": (timezone.now() + dt.timedelta(hours=1)).isoformat()},
    )
    automation_pause(automation_id=once.pk)
    Automation.objects.filter(pk=once.pk).update(
        schedule={"type": "once", "at": "2020-01-01T09:00:00+00:00"}
    )

    response = signed_in.post(f"/automations/{once.pk}/resume/", follow=True)

    assert "Its one time has passed" in response.content.decode()
    assert not Automation.objects.get(pk=once.pk).enabled


def test_a_finished_once_says_it_is_finished_not_paused(signed_in):
    once = automation_create(
        name="Call mum",
        kind="reminder",
        schedule={"type": "once", "at": (timezone.now() + dt.timedelta(hours=1)).isoformat()},
    )
    automation_pause(automation_id=once.pk)
    Automation.objects.filter(pk=once.pk).update(
        schedule={"type": "once", "at": "2020-01-01T09:00:00+00:00"}
    )

    page = signed_in.get(f"/automations/{once.pk}/").content.decode()

    assert "Its one time has passed: it will not run again." in page
    assert "Next runs once resumed" not in page


def test_an_empty_form_says_what_each_field_needs(signed_in):
    response = signed_in.post("/automations/new/", {"name": "", "message": ""})

    page = response.content.decode()
    assert "This field is required." not in page
    assert "Give it a name, e.g. Water the plants." in page
    assert "Choose what it does: a reminder, a prompt or a task digest." in page
    assert "Choose how often it runs." in page
    assert not Automation.objects.exists()


# --- the run history ---------------------------------------------------------------------------------


def test_the_detail_page_shows_the_receipts_with_their_notification_and_error(signed_in):
    automation = stretch()
    now = timezone.now()
    note = Notification.objects.create(title="Stretch", body="Stand up and stretch")
    AutomationRun.objects.create(
        automation=automation,
        slot=now - dt.timedelta(days=1),
        status="ok",
        started_at=now - dt.timedelta(days=1),
        finished_at=now - dt.timedelta(days=1),
        notification=note,
    )
    AutomationRun.objects.create(
        automation=automation,
        slot=now - dt.timedelta(days=2),
        status="error",
        started_at=now - dt.timedelta(days=2),
        finished_at=now - dt.timedelta(days=2),
        error="The model did not answer in time.",
    )

    page = signed_in.get(f"/automations/{automation.pk}/").content.decode()

    assert "Run history" in page
    assert "Stand up and stretch" in page and "The model did not answer in time." in page
    assert local(now - dt.timedelta(days=1)).strftime("%-d %b %Y, %H:%M") in page
    assert "every day at 08:30 (Europe/Paris)" in page


def test_two_thousand_runs_are_paginated_in_a_few_queries(signed_in, django_assert_max_num_queries):
    automation = stretch()
    start = timezone.now() - dt.timedelta(days=3_000)
    notes = Notification.objects.bulk_create(
        Notification(title=f"Stretch {i}") for i in range(2_000)
    )
    AutomationRun.objects.bulk_create(
        AutomationRun(
            automation=automation,
            slot=start + dt.timedelta(days=i),
            status="ok",
            started_at=start + dt.timedelta(days=i),
            finished_at=start + dt.timedelta(days=i),
            notification=notes[i],
        )
        for i in range(2_000)
    )

    # The session, the user, the owner's zone, the automation (twice), the count, one page of
    # receipts with their notifications, and the session's renewal.
    with django_assert_max_num_queries(10):
        page = signed_in.get(f"/automations/{automation.pk}/", {"page": "2"})

    body = page.content.decode()
    assert page.status_code == 200
    assert "Page 2 of 40" in body
    assert "Stretch 1949<" in body and "Stretch 1999<" not in body  # newest slot first


# --- the live preview --------------------------------------------------------------------------------


def test_the_preview_gives_the_next_runs_in_the_owner_zone(signed_in):
    response = signed_in.get(
        "/automations/preview/",
        {"schedule_type": "weekly", "schedule_days": ["mon", "wed"], "schedule_time": "08:30"},
    )

    assert response.status_code == 200
    body = response.json()
    assert body["text"] == "every Mon, Wed at 08:30 (Europe/Paris)"
    assert len(body["runs"]) == 5
    for run in body["runs"]:
        at = local(dt.datetime.fromisoformat(run["at"]))
        assert (at.strftime("%a"), at.strftime("%H:%M")) in {("Mon", "08:30"), ("Wed", "08:30")}
        assert run["label"].endswith("08:30")


def test_the_preview_names_what_is_wrong(signed_in):
    bad = signed_in.get(
        "/automations/preview/", {"schedule_type": "cron", "schedule_cron": "61 * * * *"}
    )
    past = signed_in.get(
        "/automations/preview/",
        {"schedule_type": "once", "schedule_date": "2020-01-01", "schedule_time": "09:00"},
    )

    assert bad.status_code == 400
    assert "five cron fields" in bad.json()["errors"]["schedule_cron"][0]
    assert past.status_code == 200 and past.json()["runs"] == []
