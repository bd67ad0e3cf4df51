"""/api/health: the database, the broker, the channel layer, the worker's and beat's heartbeats
and the last setup run; "ok" or "degraded" (200), 503 only without a database."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import OperationalError, connection
from django.utils import timezone

from talorys.ops.models import Heartbeat, SetupRun
from talorys.ops.selectors import app_version
from talorys.ops.services import heartbeat_record, setup_run_record


def beat_at(name: str, seconds_ago: float) -> None:
    Heartbeat.objects.update_or_create(
        name=name, defaults={"at": timezone.now() - dt.timedelta(seconds=seconds_ago)}
    )


def health(anon_api) -> tuple[int, dict]:
    response = anon_api.get("/api/health")
    return response.status_code, response.json()


def test_fresh_heartbeats_are_ok(anon_api, settings):
    settings.TALORYS_HEARTBEAT_SECONDS = 30
    beat_at("worker", 85)  # within three intervals: one late beat is not an outage
    heartbeat_record(name="beat")

    status, body = health(anon_api)

    assert status == 200
    assert body == {
        "status": "ok",
        "database": "ok",
        "broker": "embedded",  # no REDIS_URL: the data dir's folders
        "channel_layer": "embedded",  # in-memory: this process only
        "worker": "ok",
        "beat": "ok",
        "setup": "unknown",
        "version": app_version(),
    }


def test_a_stale_worker_degrades_but_keeps_the_server_healthy(anon_api, settings):
    settings.TALORYS_HEARTBEAT_SECONDS = 30
    beat_at("worker", 91)
    heartbeat_record(name="beat")

    status, body = health(anon_api)

    assert status == 200
    assert (body["status"], body["worker"], body["beat"]) == ("degraded", "stale", "ok")


def test_heartbeats_never_seen_are_unknown(anon_api):
    status, body = health(anon_api)

    assert status == 200
    assert (body["status"], body["worker"], body["beat"]) == ("degraded", "unknown", "unknown")


def test_the_interval_follows_the_setting(anon_api, settings):
    beat_at("worker", 100)
    beat_at("beat", 100)
    settings.TALORYS_HEARTBEAT_SECONDS = 60

    assert health(anon_api)[1]["status"] == "ok"

    settings.TALORYS_HEARTBEAT_SECONDS = 10
    assert health(anon_api)[1]["worker"] == "stale"


def test_a_failed_setup_degrades_until_a_later_run_is_ok(anon_api):
    heartbeat_record(name="worker")
    heartbeat_record(name="beat")
    started = timezone.now()
    setup_run_record(kind=SetupRun.Kind.UPGRADE, started_at=started, ok=False, message="boom")

    body = health(anon_api)[1]
    assert (body["status"], body["setup"]) == ("degraded", "failed")

    setup_run_record(kind=SetupRun.Kind.UPGRADE, started_at=timezone.now(), ok=True)
    body = health(anon_api)[1]
    assert (body["status"], body["setup"]) == ("ok", "ok")


def test_no_database_is_503(anon_api, monkeypatch):
    heartbeat_record(name="worker")
    heartbeat_record(name="beat")

    def refuse(*args, **kwargs):
        raise OperationalError("connection refused")

    with monkeypatch.context() as patched:
        # Django's connection, not ours: the database server went away.
        patched.setattr(connection, "cursor", refuse)
        status, body = health(anon_api)

    assert status == 503
    assert body["status"] == "degraded"
    assert body["database"] == "unavailable"
    assert body["worker"] == "unknown"  # heartbeats live in the database


@pytest.mark.redis
def test_redis_broker_and_channel_layer_make_a_round_trip(anon_api, settings, redis_url_for_tests):
    heartbeat_record(name="worker")
    heartbeat_record(name="beat")
    settings.REDIS_URL = redis_url_for_tests
    settings.CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [redis_url_for_tests]},
        }
    }

    status, body = health(anon_api)

    assert status == 200
    assert (body["broker"], body["channel_layer"], body["status"]) == ("ok", "ok", "ok")


def test_redis_down_degrades_without_taking_the_server_down(anon_api, settings, unused_tcp_port):
    heartbeat_record(name="worker")
    heartbeat_record(name="beat")
    down = f"redis://127.0.0.1:{unused_tcp_port}/0"
    settings.REDIS_URL = down
    settings.CHANNEL_LAYERS = {
        "default": {"BACKEND": "channels_redis.core.RedisChannelLayer", "CONFIG": {"hosts": [down]}}
    }

    status, body = health(anon_api)

    assert status == 200
    assert (body["broker"], body["channel_layer"]) == ("unavailable", "unavailable")
    assert body["status"] == "degraded"
