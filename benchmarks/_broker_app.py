"""The Celery app of benchmarks/broker_latency.py: Talorys's own, on kombu's plain filesystem
transport when BENCH_BROKER=kombu (the one before talorys/ops/broker.py)."""

import os

from config.celery import app

if os.environ.get("BENCH_BROKER") == "kombu":
    app.conf.broker_transport = None

__all__ = ["app"]
