"""A reminder through a running Talorys's API, for the tests that start the whole product
(talorys_run): it is the shortest path through web, beat, the worker and back."""

from __future__ import annotations

import datetime as dt
import subprocess

import httpx

from tests.waiting import wait_for


def a_reminder_fires(
    client: httpx.Client,
    headers: dict[str, str],
    *,
    what: str,
    alive: subprocess.Popen | None = None,
) -> None:
    """Make a reminder due in 3 seconds and wait for its notification ("Stretch")."""
    at = (dt.datetime.now(dt.UTC) + dt.timedelta(seconds=3)).isoformat()
    created = client.post(
        "/api/automations",
        headers=headers,
        json={
            "name": "Stretch",
            "kind": "reminder",
            "message": "Stretch",
            "schedule": {"type": "once", "at": at},
        },
    )
    assert created.status_code == 201, created.text
    wait_for(
        lambda: client.get("/api/notifications").json()["count"] > 0,
        what,
        alive=alive,
        interval=0.5,
    )
    assert client.get("/api/notifications").json()["items"][0]["title"] == "Stretch"
