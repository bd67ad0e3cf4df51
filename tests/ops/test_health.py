"""/api/health: the database, the broker, the channel layer, the worker's and beat's heartbeats
and the last setup run; "ok" or "degraded" (200), 503 only without a database. Anyone gets the
status; the owner's session or an API token gets every check and the version."""

from __future__ import annotations

import datetime as dt
import os

import pytest
from django.db import OperationalError, connection
from django.utils import timezone

from talorys.accounts.services import api_token_create
from talorys.ops.health import health_report
from talorys.ops.models import Heartbeat, SetupRun
from talorys.ops.selectors import app_version
from talorys.ops.services import heartbeat_record, setup_run_record

# The embedder process is part of every install's report: up here, unless a test stops it.
pytestmark = pytest.mark.usefixtures("local_embeddings")


def beat_at(name: str, seconds_ago: float) -> None:
    Heartbeat.objects.update_or_create(
        name=name, defaults={"at": timezone.now() - dt.timedelta(seconds=seconds_ago)}
    )


def health(api, headers: dict | None = None) -> tuple[int, dict]:
    response = api.get("/api/health", headers=headers)
    return response.status_code, response.json()


def test_anonymous_callers_get_the_status_only(anon_api, owner, settings):
    settings.TALORYS_HEARTBEAT_SECONDS = 30
    assert health(anon_api) == (200, {"status": "degraded"})  # no worker or beat seen yet
    heartbeat_record(name="worker")
    heartbeat_record(name="beat")
    assert health(anon_api) == (200, {"status": "ok"})
    # A token that is not one is an anonymous caller, not a 401: monitors keep working.
    assert health(anon_api, {"Authorization": "Bearer tal_nothing"}) == (200, {"status": "ok"})


@pytest.mark.parametrize("scope", ["read", "write"])
def test_an_api_token_gets_every_check_and_the_version(anon_api, owner, scope):
    _token, raw = api_token_create(user=owner, name="monitor", scope=scope)

    status, body = health(anon_api, {"Authorization": f"Bearer {raw}"})

    assert status == 200
    assert body["version"] == app_version()
    assert {"database", "broker", "channel_layer", "worker", "beat", "setup"} <= body.keys()


def test_fresh_heartbeats_are_ok(api, settings):
    settings.TALORYS_HEARTBEAT_SECONDS = 30
    beat_at("worker", 85)  # within three intervals: one late beat is not an outage
    heartbeat_record(name="beat")

    status, body = health(api)

    assert status == 200
    assert body == {
        "status": "ok",
        "database": "ok",
        "broker": "embedded",  # no REDIS_URL: the data dir's folders
        "channel_layer": "embedded",  # in-memory: this process only
        "worker": "ok",
        "beat": "ok",
        "embedder": "ok",
        "setup": "unknown",
        "version": app_version(),
        "served_by": os.getpid(),  # the web process that answered (talorys/ops/web.py)
    }


def test_a_stale_worker_degrades_but_keeps_the_server_healthy(api, settings):
    settings.TALORYS_HEARTBEAT_SECONDS = 30
    beat_at("worker", 91)
    heartbeat_record(name="beat")

    status, body = health(api)

    assert status == 200
    assert (body["status"], body["worker"], body["beat"]) == ("degraded", "stale", "ok")


def test_heartbeats_never_seen_are_unknown(api):
    status, body = health(api)

    assert status == 200
    assert (body["status"], body["worker"], body["beat"]) == ("degraded", "unknown", "unknown")


def test_the_interval_follows_the_setting(api, settings):
    beat_at("worker", 100)
    beat_at("beat", 100)
    settings.TALORYS_HEARTBEAT_SECONDS = 60

    assert health(api)[1]["status"] == "ok"

    settings.TALORYS_HEARTBEAT_SECONDS = 10
    assert health(api)[1]["worker"] == "stale"


def test_a_failed_setup_degrades_until_a_later_run_is_ok(api):
    heartbeat_record(name="worker")
    heartbeat_record(name="beat")
    started = timezone.now()
    setup_run_record(kind=SetupRun.Kind.UPGRADE, started_at=started, ok=False, message="boom")

    body = health(api)[1]
    assert (body["status"], body["setup"]) == ("degraded", "failed")

    setup_run_record(kind=SetupRun.Kind.UPGRADE, started_at=timezone.now(), ok=True)
    body = health(api)[1]
    assert (body["status"], body["setup"]) == ("ok", "ok")


def test_no_database_is_503(anon_api, monkeypatch):
    heartbeat_record(name="worker")
    heartbeat_record(name="beat")

    def refuse(*args, **kwargs):
        raise OperationalError("connection refused")

    with monkeypatch.context() as patched:
        # Django's connection, not ours: the database server went away. A monitor has no
        # session (a session could not be read either) and sees the status; talorys_check
        # prints the report.
        patched.setattr(connection, "cursor", refuse)
        status, body = health(anon_api)
        report = health_report()

    assert (status, body) == (503, {"status": "degraded"})
    assert report.database == "unavailable"
    assert report.worker.status == "unknown"  # heartbeats live in the database


@pytest.mark.redis
def test_redis_broker_and_channel_layer_make_a_round_trip(api, settings, redis_url_for_tests):
    heartbeat_record(name="worker")
    heartbeat_record(name="beat")
    settings.REDIS_URL = redis_url_for_tests
    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [redis_url_for_tests]},
        }
    }

    status, body = health(api)

    assert status == 200
    assert (body["broker"], body["channel_layer"], body["status"]) == ("ok", "ok", "ok")


def test_redis_down_degrades_without_taking_the_server_down(api, settings, unused_tcp_port):
    heartbeat_record(name="worker")
    heartbeat_record(name="beat")
    down = f"redis://127.0.0.1:{unused_tcp_port}/0"
    settings.REDIS_URL = down
    settings.CHANNEL_LAYERS = {
        "default": {"BACKEND": "channels_redis.core.RedisChannelLayer", "CONFIG": {"hosts": [down]}}
    }

    status, body = health(api)

    assert status == 200
    assert (body["broker"], body["channel_layer"]) == ("unavailable", "unavailable")
    assert body["status"] == "degraded"
