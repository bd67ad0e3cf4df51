"""The automations lists run as many queries for twenty rows as for one (no query per row): the
owner's zone, which every row's schedule text needs, is read once per response."""

from __future__ import annotations

import datetime as dt

from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from automations.models import Automation, AutomationRun
from automations.services.crud import automation_create

SMALL, LARGE = 1, 20


def automations(n: int) -> None:
    for i in range(n):
        automation_create(
            name=f"Routine {i}", kind="reminder", schedule={"type": "daily", "time": "08:00"}
        )


def queries(api, url: str) -> tuple[int, int]:
    with CaptureQueriesContext(connection) as captured:
        response = api.get(url)
    assert response.status_code == 200, response.content
    return len(captured), len(response.json()["items"])


def test_the_automation_list_reads_the_zone_once(api, owner_zone):
    owner_zone("Europe/Paris")
    automations(SMALL)
    few, listed = queries(api, "/api/automations")
    assert listed == SMALL
    automations(LARGE - SMALL)
    many, listed = queries(api, "/api/automations")
    assert listed == LARGE
    assert many == few
    body = api.get("/api/automations").json()
    assert {item["schedule_text"] for item in body["items"]} == {
        "every day at 08:00 (Europe/Paris)"
    }


def test_the_run_list_is_constant_in_rows(api):
    automations(1)
    automation = Automation.objects.get()
    now = timezone.now()

    def receipts(start: int, n: int) -> None:
        for i in range(start, start + n):
            slot = now - dt.timedelta(minutes=i)
            AutomationRun.objects.create(
                automation=automation, slot=slot, started_at=slot, finished_at=slot, status="ok"
            )

    url = f"/api/automations/{automation.pk}/runs"
    receipts(0, SMALL)
    few, listed = queries(api, url)
    assert listed == SMALL
    receipts(SMALL, LARGE - SMALL)
    many, listed = queries(api, url)
    assert (many, listed) == (few, LARGE)
