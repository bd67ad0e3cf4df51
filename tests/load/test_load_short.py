"""The CI variant of benchmarks/load.py: the same stack (a throwaway PostgreSQL database,
daphne on Redis, the fake model in its own process) and the same clients, shorter: 10 chat
clients and 10 API clients for 8 s, then 40 turns at once. `make load` runs the long one."""

from __future__ import annotations

import runpy

import pytest
from django.utils.module_loading import import_string

from benchmarks import load
from tests.conftest import ROOT

pytestmark = [pytest.mark.postgres, pytest.mark.redis]

PIECES = 5


@pytest.fixture
def stack(needs_postgres, redis_url_for_tests):
    with load.live_stack(redis_url_for_tests, pieces=PIECES, pause=0.05) as running:
        yield running


def test_a_short_load_loses_nothing_and_the_burst_is_refused_cleanly(stack):
    report = load.measure(stack, seconds=8, turns=10, crud=10, burst=40, pieces=PIECES, probes=3)
    print(load.summary(report, turns=10, crud=10, pieces=PIECES, pause=0.05))

    assert report.failures == []
    assert sum(turn.outcome == "complete" for turn in report.load.turns) >= 10
    assert sum(report.load.crud.statuses.values()) > 0
    assert report.burst is not None
    assert len(report.burst.turns) == 40
    assert report.burst.probe.latencies  # the task list answered during the burst


def test_the_redis_channel_layer_outwaits_its_own_blocking_pop(
    redis_url_for_tests, tmp_path, monkeypatch
):
    # Each consumer waits on its channel with a blocking pop; a read timeout no longer than
    # that pop raced it and closed a quiet socket with 1011 (found by benchmarks/load.py).
    monkeypatch.setenv("REDIS_URL", redis_url_for_tests)
    monkeypatch.setenv("TALORYS_DATA_DIR", str(tmp_path))
    production = runpy.run_path(str(ROOT / "config" / "settings.py"))
    config = production["CHANNEL_LAYERS"]["default"]
    layer = import_string(config["BACKEND"])(**config["CONFIG"])
    read_timeout = layer.create_pool(0).connection_kwargs.get("socket_timeout")
    assert read_timeout is not None and read_timeout > layer.brpop_timeout
